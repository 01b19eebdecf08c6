import AudioGraph
import MIDICore
import PianolaSupport
import Synchronization
import Testing

@testable import Sampler

#if canImport(Glibc)
    import Glibc
#endif

/// The bundled font, from this file's location.
let bundledFont: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

func dryLeadSettings() -> SamplerNode.Settings {
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    return settings
}

/// First frame whose absolute value exceeds `threshold` in either channel.
/// The left channel of `frames` frames of a dry sampler with `font`, `note` started at frame 0.
func renderedNote(font: String, channel: UInt8 = 0, note: UInt8 = 60, frames: Int = 8192) throws -> [Float] {
    let sampler = try SamplerNode(settings: dryLeadSettings())
    try sampler.loadSoundFont(at: font)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    sampler.receive(.noteOn(channel: channel, note: note, velocity: 100), atFrameOffset: 0)
    sampler.render(
        into: buffer, inputs: .none, frameCount: frames, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
    return buffer.samples(channel: 0)
}

func onset(_ buffer: AudioBuffer, frames: Int, threshold: Float = 1e-4) -> Int? {
    (0..<frames).first { abs(buffer.channel(0)[$0]) > threshold || abs(buffer.channel(1)[$0]) > threshold }
}

@Suite("Sampler node", .serialized)
struct SamplerNodeTests {
    @Test("events at a frame offset start at the next FluidSynth 64-frame block boundary, not at the quantum's start")
    func eventsAtFrameOffsets() throws {
        for offset in [0, 1, 63, 64, 100, 500, 1000, 1500] {
            let sampler = try SamplerNode(settings: dryLeadSettings())
            try sampler.loadSoundFont(at: bundledFont)
            try sampler.selectProgram(80, onChannel: 0)  // square lead: sound from the first sample
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 2048)
            sampler.receive(.noteOn(channel: 0, note: 69, velocity: 127), atFrameOffset: offset)
            sampler.render(
                into: buffer, inputs: .none, frameCount: 2048, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
            let start = try #require(onset(buffer, frames: 2048), "offset \(offset): no sound")
            // FluidSynth starts voices at its 64-frame block boundaries; the attack needs a few
            // frames to cross the threshold.
            let block = (offset + 63) / 64 * 64
            #expect(start >= block && start <= block + 16, "offset \(offset): sound from frame \(start)")
        }
    }

    @Test("the note API plays and stops notes; all notes off releases everything")
    func noteAPI() throws {
        let sampler = try SamplerNode(settings: dryLeadSettings())
        try sampler.loadSoundFont(at: bundledFont)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4096)
        let time = AudioTime(sampleTime: 0, sampleRate: 44_100)
        try sampler.sendProgramChange(19, onChannel: 2)
        try sampler.startNote(60, withVelocity: 100, onChannel: 2)
        try sampler.startNote(64, withVelocity: 100, onChannel: 2)
        try sampler.sendController(7, withValue: 100, onChannel: 2)
        try sampler.sendPitchBend(9000, onChannel: 2)
        try sampler.sendPressure(60, onChannel: 2)
        sampler.render(into: buffer, inputs: .none, frameCount: 4096, time: time)
        #expect(sampler.activeVoiceCount >= 2)
        #expect(buffer.samples(channel: 0).contains { abs($0) > 0.001 })
        try sampler.stopNote(60, onChannel: 2)
        sampler.allNotesOff()
        for _ in 0..<40 { sampler.render(into: buffer, inputs: .none, frameCount: 4096, time: time) }
        #expect(sampler.activeVoiceCount == 0)
        #expect(!buffer.samples(channel: 0).contains { abs($0) > 1e-4 })
    }

    @Test("GM drums play on channel 10 by default; a missing preset is a typed error")
    func drumsAndMissingPreset() throws {
        let sampler = try SamplerNode(settings: dryLeadSettings())
        try sampler.loadSoundFont(at: bundledFont)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4096)
        sampler.receive(.noteOn(channel: 9, note: 38, velocity: 120), atFrameOffset: 0)
        sampler.render(
            into: buffer, inputs: .none, frameCount: 4096, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
        #expect(buffer.samples(channel: 0).contains { abs($0) > 0.01 })
        #expect(throws: SoundFontError.presetMissing(bank: 5, program: 3)) {
            try sampler.selectProgram(3, bank: 5, onChannel: 0)
        }
    }

    @Test("master volume SysEx scales the output; GM System On restores it")
    func masterVolume() throws {
        func level(_ messages: [MIDIMessage]) throws -> Float {
            let sampler = try SamplerNode(settings: dryLeadSettings())
            try sampler.loadSoundFont(at: bundledFont)
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 8192)
            for message in messages { sampler.receive(message, atFrameOffset: 0) }
            sampler.receive(.programChange(channel: 0, program: 16), atFrameOffset: 0)
            sampler.receive(.noteOn(channel: 0, note: 60, velocity: 100), atFrameOffset: 0)
            sampler.render(
                into: buffer, inputs: .none, frameCount: 8192, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
            return buffer.samples(channel: 0)[4096...].map(abs).max() ?? 0
        }
        let full = try level([])
        let half = try level([.systemExclusive([0x7F, 0x7F, 0x04, 0x01, 0x7F, 0x3F])])  // 8191/16383
        let restored = try level([
            .systemExclusive([0x7F, 0x7F, 0x04, 0x01, 0x00, 0x20]), .systemExclusive([0x7E, 0x7F, 0x09, 0x01]),
        ])
        #expect(abs(half / full - 0.5) < 0.01)
        #expect(abs(restored / full - 1) < 0.01)
    }

    @Test("GM, GS and XG resets reset the channels; runtime settings apply")
    func resetsAndSettings() throws {
        let sampler = try SamplerNode(settings: dryLeadSettings())
        try sampler.loadSoundFont(at: bundledFont)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        let time = AudioTime(sampleTime: 0, sampleRate: 44_100)
        let resets: [(String, [UInt8])] = [
            ("GM System On", [0x7E, 0x7F, 0x09, 0x01]),
            ("GS Reset", [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]),
            ("XG System On", [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00]),
        ]
        for (name, reset) in resets {
            sampler.receive(.programChange(channel: 3, program: 40), atFrameOffset: 0)
            sampler.render(into: buffer, inputs: .none, frameCount: 256, time: time)
            #expect(sampler.program(onChannel: 3)?.program == 40)
            sampler.receive(.systemExclusive(reset), atFrameOffset: 0)
            sampler.render(into: buffer, inputs: .none, frameCount: 256, time: time)
            #expect(sampler.program(onChannel: 3)?.program == 0, "\(name) resets the program")
        }
        sampler.polyphony = 32
        #expect(sampler.polyphony == 32)
        sampler.interpolation = .seventhOrder
        sampler.isReverbEnabled = true
        sampler.isChorusEnabled = false
        #expect(sampler.isReverbEnabled && !sampler.isChorusEnabled && sampler.interpolation == .seventhOrder)
    }

    @Test("fonts load asynchronously with typed errors: not found, not a SoundFont")
    func asyncLoading() async throws {
        let sampler = try SamplerNode()
        let font = try await sampler.loadSoundFont(at: bundledFont)
        #expect(font.rawValue >= 1)
        await #expect(throws: SoundFontError.notFound(path: "/nope.sf2")) {
            try await sampler.loadSoundFont(at: "/nope.sf2")
        }
        do {
            _ = try await sampler.loadSoundFont(at: #filePath)
            Issue.record("a Swift source loaded as a SoundFont")
        } catch {
            guard case .notASoundFont = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test("two samplers in one graph, each with its own font and program, mix at the output")
    func twoSamplersInOneGraph() throws {
        let engine = AudioEngine()
        let first = try SamplerNode(name: "first", settings: dryLeadSettings())
        let second = try SamplerNode(name: "second", settings: dryLeadSettings())
        try first.loadSoundFont(at: bundledFont)
        try second.loadSoundFont(at: bundledFont)
        try second.selectProgram(80, onChannel: 0)
        for sampler in [first, second] {
            try engine.attach(sampler)
            try engine.connect(sampler, to: engine.mainMixerNode)
        }
        try engine.mainMixerNode.setPan(-1, forInputBus: 0)
        try engine.mainMixerNode.setPan(1, forInputBus: 1)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
        try first.startNote(48, withVelocity: 100, onChannel: 0)
        try second.startNote(72, withVelocity: 100, onChannel: 0)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 8192)
        try engine.renderOffline(frameCount: 8192, into: buffer)
        #expect(buffer.samples(channel: 0).contains { abs($0) > 0.005 })
        #expect(buffer.samples(channel: 1).contains { abs($0) > 0.005 })
        // A sampler created for another rate follows the engine's (SamplerRateTests).
        var settings = SamplerNode.Settings()
        settings.sampleRate = 48_000
        let otherRate = try SamplerNode(settings: settings)
        try engine.attach(otherRate)
        try engine.connect(otherRate, to: engine.mainMixerNode)
        #expect(otherRate.synth.sampleRate == 44_100)
    }

    @Test(
        "what applies at once (a font loading, a program selected and read back) waits for the render thread, which renders on meanwhile"
    )
    func callsThatApplyAtOnceWhileRendering() throws {
        let sampler = try SamplerNode(settings: dryLeadSettings())
        try sampler.loadSoundFont(at: bundledFont)
        let renderer = try BackgroundRenderer(sampler)
        defer { renderer.stop() }
        while renderer.quanta < 10 { usleep(1_000) }
        for step in 0..<60 {
            let program = UInt8(step % 20)
            try sampler.startNote(UInt8(48 + step % 24), withVelocity: 100, onChannel: 0)
            try sampler.selectProgram(program, onChannel: 0)
            #expect(sampler.program(onChannel: 0)?.program == program)
            try sampler.sendProgramChange(40, onChannel: 1)
            #expect(sampler.program(onChannel: 1)?.program == 40, "the messages sent before apply first")
            sampler.allNotesOff()
        }
        let before = renderer.quanta
        try sampler.loadSoundFont(at: bundledFont)
        #expect(sampler.program(onChannel: 1)?.program == 40, "the channels keep their programs, from the new font")
        while renderer.quanta < before + 10 { usleep(1_000) }
    }
}

/// Renders a sampler on a thread of its own, as an output's audio thread would, until stopped.
private final class BackgroundRenderer: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let rendered = Atomic<Int>(0)

    /// Quanta rendered so far.
    var quanta: Int { rendered.load(ordering: .acquiring) }

    init(_ sampler: SamplerNode) throws {
        try SystemThread.detach { [self] in
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
            var time: Int64 = 0
            while !stopping.load(ordering: .acquiring) {
                sampler.render(
                    into: buffer, inputs: .none, frameCount: 256, time: AudioTime(sampleTime: time, sampleRate: 44_100))
                time += 256
                rendered.add(1, ordering: .releasing)
                usleep(200)
            }
            finished.store(true, ordering: .releasing)
        }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1_000) }
    }
}

let sf3Font = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

@Suite("SF3 SoundFonts")
struct SF3Tests {
    @Test(
        "an SF3 (Ogg Vorbis compressed) font loads without warnings and plays",
        .enabled(if: SoundFontDiscovery.isFile(sf3Font), "Debian's fluidr3mono-gm-soundfont is not installed: skipped"))
    func sf3Plays() throws {
        let info = try SoundFontInfo.load(path: sf3Font)
        #expect(info.presets.count > 128)
        #expect(info.warnings == [])
        #expect(try renderedNote(font: sf3Font).contains { abs($0) > 0.01 })
    }
}
