/// What tests may read of a running synthesizer (through `@testable import`): not for the audio
/// thread, and not part of the engine's API.
extension VoiceSynthesizer {
    /// Each sounding voice's sample (its index in the bank's sample headers) and its read position
    /// in that sample, in points from the sample's first one (the fraction included).
    func playbackPositions() -> [(sample: Int, position: Double)] {
        voices.indices.map { index in
            let (group, lane) = (index / Lanes.width, index % Lanes.width)
            let voice = voices[index]
            let whole = Int(lanes.position[group][lane]) - voice.sample.offset
            let fraction = Double(lanes.fraction[group][lane]) / 4_294_967_296
            return (recipes[voice.preset][voice.recipe].sample, Double(whole) + fraction)
        }
    }
}
