// CPU time per voice-sample of the native voice engine against FluidSynth's (Pianola's SamplerNode),
// side by side in one run: a chord of N sustained voices (N = 16 … 1024, the bundled font's
// square lead, dry), rendered in 64-frame quanta for a few seconds of audio, each engine on the
// same thread, interleaved per N. Prints one line per N and engine, and with --json a JSON line.
//
//   swift run -c release voice-benchmark [--seconds S] [--font PATH] [--program P] [--json]
import AudioGraph
import Foundation
import Sampler
import SoundFontFiles
import VoiceEngine

#if canImport(Glibc)
    import Glibc
#endif

func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let seconds = Double(option("--seconds") ?? "") ?? 4
let program = Int(option("--program") ?? "") ?? 80
let json = arguments.contains("--json")
let font =
    option("--font")
    ?? {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/SoundFonts/PianolaGM.sf2"
    }()
let frames = Int(seconds * 44_100)

/// The keys of an N-voice chord: 16 channels, keys spread so that no key repeats on a channel.
func chord(_ voices: Int) -> [(channel: Int, key: Int)] {
    (0..<voices).map { index in (channel: index % 16 == 9 ? 15 : index % 16, key: 24 + (index / 16) % 80) }
}

func fluidSynth(voices: Int) throws -> (cpu: Double, sounding: Int) {
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    settings.polyphony = max(256, voices * 2)
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: font)
    for channel in 0..<16 {
        sampler.receive(.programChange(channel: UInt8(channel), program: UInt8(program)), atFrameOffset: 0)
    }
    for (channel, key) in chord(voices) {
        sampler.receive(.noteOn(channel: UInt8(channel), note: UInt8(key), velocity: 100), atFrameOffset: 0)
    }
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
    let time = AudioTime(sampleTime: 0, sampleRate: 44_100)
    sampler.render(into: buffer, inputs: .none, frameCount: 64, time: time)
    let start = cpuSeconds()
    for _ in 0..<(frames / 64) { sampler.render(into: buffer, inputs: .none, frameCount: 64, time: time) }
    return (cpuSeconds() - start, sampler.activeVoiceCount)
}

func native(voices: Int, bank: SoundFontBank) throws -> (cpu: Double, sounding: Int) {
    let synthesizer = VoiceSynthesizer(settings: .init(polyphony: max(256, voices * 2)))
    try synthesizer.load(bank, presets: [(0, program)])
    for channel in 0..<16 { synthesizer.send(.programChange(channel: channel, program: program), atFrame: 0) }
    for (channel, key) in chord(voices) {
        synthesizer.send(.noteOn(channel: channel, key: key, velocity: 100), atFrame: 0)
    }
    var (left, right, reverb, chorus) = (
        [Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64),
        [Float](repeating: 0, count: 64)
    )
    synthesizer.render(frameCount: 64, left: &left, right: &right, reverb: &reverb, chorus: &chorus)
    let start = cpuSeconds()
    for _ in 0..<(frames / 64) {
        synthesizer.render(frameCount: 64, left: &left, right: &right, reverb: &reverb, chorus: &chorus)
    }
    return (cpuSeconds() - start, synthesizer.activeVoiceCount)
}

let bank = try SoundFontBank(contentsOf: font)
for voices in [16, 32, 64, 128, 256, 512, 1024] {
    let theirs = try fluidSynth(voices: voices)
    let ours = try native(voices: voices, bank: bank)
    func nanoseconds(_ cpu: Double, _ sounding: Int) -> Double { cpu * 1e9 / Double(max(sounding, 1) * frames) }
    let (fluidNs, nativeNs) = (nanoseconds(theirs.cpu, theirs.sounding), nanoseconds(ours.cpu, ours.sounding))
    if json {
        print(
            "{\"voices\": \(voices), \"fluidsynthVoices\": \(theirs.sounding), \"nativeVoices\": \(ours.sounding), "
                + "\"fluidsynthNanosecondsPerVoiceSample\": \(fluidNs), \"nativeNanosecondsPerVoiceSample\": \(nativeNs)}"
        )
    } else {
        print(
            String(
                format: "%5d voices: FluidSynth %6.2f ns (%d sounding), native %6.2f ns (%d sounding): %.2fx", voices,
                fluidNs, theirs.sounding, nativeNs, ours.sounding, fluidNs / nativeNs))
    }
}
