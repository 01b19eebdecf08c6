import Foundation
import Pianola
import Testing

@Suite("A sampler played through a varispeed")
struct VarispeedGraphTests {
    /// A piano C4 every half second (120 BPM), eight times.
    func pulses() -> MusicSequence {
        var events: [MIDIFile.Event] = [
            MIDIFile.Event(tick: 0, .meta(.tempo(microsecondsPerQuarterNote: 500_000))),
            MIDIFile.Event(tick: 0, .channel(.programChange(channel: 0, program: 0))),
        ]
        for index in 0..<8 {
            let tick = 480 * (index + 1)
            events.append(MIDIFile.Event(tick: tick, .channel(.noteOn(channel: 0, note: 60, velocity: 110))))
            events.append(MIDIFile.Event(tick: tick + 200, .channel(.noteOff(channel: 0, note: 60, velocity: 0))))
        }
        events.append(MIDIFile.Event(tick: 480 * 10, .meta(.endOfTrack)))
        let file = MIDIFile(
            format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [MIDIFile.Track(events: events)])
        return MusicSequence(file: file)
    }

    @Test("notes still come when they are due (every 0.5 s, within FluidSynth's block), only faster and higher")
    func notesOnTime() throws {
        for rate in [2.0, 0.5] {
            let engine = AudioEngine()
            var settings = SamplerNode.Settings()
            settings.isReverbEnabled = false
            settings.isChorusEnabled = false
            let sampler = try SamplerNode(settings: settings)
            try sampler.loadSoundFont(at: checkoutRoot + "/SoundFonts/PianolaGM.sf2")
            let varispeed = VarispeedNode()
            varispeed.rate = rate
            try engine.attach(sampler)
            try engine.attach(varispeed)
            try engine.connect(sampler, to: varispeed)
            try engine.connect(varispeed, to: engine.outputNode)
            let player = MusicPlayer(sequence: pulses(), destination: sampler)
            try engine.addRenderObserver(player)
            // Quanta of 1000 frames: unscaled, an event's offset in the quantum would move it by up to
            // 500 frames (rate 2) or 1000 (rate 0.5).
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 1_000)
            player.play()
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 1_000)
            var output: [Float] = []
            while output.count < 44_100 * 5 {
                try engine.renderOffline(frameCount: 1_000, into: buffer)
                output += UnsafeBufferPointer(start: buffer.channel(0), count: 1_000)
            }
            var onsets: [Int] = []
            var frame = 0
            while let found = firstSound(output.flatMap { [$0, $0] }, from: frame, threshold: 0.02) {
                onsets.append(found)
                frame = found + 15_000
            }
            let steps = zip(onsets.dropFirst(), onsets).map { $0 - $1 }
            // A 64-frame FluidSynth block is 64 / rate output frames; the song's events are on whole
            // quanta of the engine no more.
            let tolerance = Int(64 / rate) + 2
            #expect(onsets.count >= 7, "rate \(rate): \(onsets)")
            #expect(steps.allSatisfy { abs($0 - 22_050) <= tolerance }, "rate \(rate): intervals \(steps)")
        }
    }
}
