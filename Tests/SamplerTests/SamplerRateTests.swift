import AudioGraph
import MIDICore
import SMF
import Sequencer
import Testing

@testable import Sampler

/// The left and right channels of `frames` frames of `sampler` in an engine at `rate`, after
/// `prepare` (run before the engine is prepared) and a note.
private func rendered(
    _ sampler: SamplerNode, at rate: Double, frames: Int = 16_384, note: UInt8 = 69
) throws -> [Float] {
    let engine = AudioEngine()
    try engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: 512)
    try sampler.startNote(note, withVelocity: 100, onChannel: 0)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    try engine.renderOffline(frameCount: frames, into: buffer)
    return buffer.interleaved()
}

@Suite("Sampler: the rate follows the engine's, as AVAudioUnitSampler's follows its connection")
struct SamplerRateTests {
    @Test(
        "a sampler made for 44.1 kHz in a 48 kHz engine plays as one made for 48 kHz, its fonts, program and settings kept"
    )
    func followsTheEngine() throws {
        var settings = SamplerNode.Settings()
        settings.sampleRate = 48_000
        let native = try SamplerNode(settings: settings)
        try native.loadSoundFont(at: bundledFont)
        try native.selectProgram(80, onChannel: 0)
        native.gain = 0.5
        let expected = try rendered(native, at: 48_000)

        let following = try SamplerNode()  // 44 100 Hz
        try following.loadSoundFont(at: bundledFont)
        try following.selectProgram(80, onChannel: 0)
        following.gain = 0.5
        let played = try rendered(following, at: 48_000)
        #expect(following.synth.sampleRate == 48_000)
        #expect(played.contains { abs($0) > 0.01 }, "it plays")
        #expect(played == expected, "the same samples as a sampler made for 48 kHz")
        #expect(following.program(onChannel: 0)?.program == 80)
    }

    @Test("a sampler whose font another shares follows too, and the sharer plays on")
    func sharedFontsStay() throws {
        let owner = try SamplerNode()
        try owner.loadSoundFont(at: bundledFont)
        let sharer = try SamplerNode(sharingSoundFontsWith: owner)
        let before = try rendered(sharer, at: 44_100)
        _ = try rendered(owner, at: 32_000)  // the owner follows 32 kHz: its fonts stay for the sharer
        #expect(owner.synth.sampleRate == 32_000)
        let after = try rendered(try SamplerNode(sharingSoundFontsWith: sharer), at: 44_100)
        #expect(before.contains { abs($0) > 0.01 } && after == before)
    }

    @Test(
        "what cannot follow names SamplerNode.Settings.sampleRate: a sampler loading on demand with a font, a rate FluidSynth does not render at"
    )
    func whatCannotFollow() throws {
        var settings = SamplerNode.Settings()
        settings.sampleLoading = .onDemand
        let onDemand = try SamplerNode(settings: settings)
        try onDemand.loadSoundFont(at: bundledFont)
        for (sampler, rate) in [(onDemand, 48_000.0), (try SamplerNode(), 192_000)] {
            let engine = AudioEngine()
            try engine.attach(sampler)
            try engine.connect(sampler, to: engine.mainMixerNode)
            let error = #expect(throws: AudioGraphError.self) {
                try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: 512)
            }
            #expect(
                error?.description.contains("SamplerNode.Settings.sampleRate") == true, "\(String(describing: error))")
        }
        // Before a font is loaded, it follows.
        let empty = try SamplerNode(settings: settings)
        try empty.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 512)
        #expect(empty.synth.sampleRate == 48_000)
    }

    @Test("an AudioSequencer playing into a sampler without a SoundFont throws noSoundFont instead of playing silence")
    func sequencerRefusesAnEmptySampler() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
        #expect(!sampler.canPlayNotes)
        let sequencer = AudioSequencer(audioEngine: engine)
        let file = MIDIFile(
            format: .singleTrack, division: .ticksPerQuarterNote(480),
            tracks: [
                MIDIFile.Track(events: [
                    MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: 60, velocity: 100))),
                    MIDIFile.Event(tick: 480, .channel(.noteOff(channel: 0, note: 60, velocity: 0))),
                    MIDIFile.Event(tick: 480, .meta(.endOfTrack)),
                ])
            ])
        sequencer.load(MusicSequence(file: file))
        #expect(throws: AudioSequencerError.noSoundFont(node: "sampler")) { try sequencer.start() }
        try sampler.loadSoundFont(at: bundledFont)
        #expect(sampler.canPlayNotes)
        try sequencer.start()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)
        var peak: Float = 0
        while !sequencer.isFinished(includingTail: true) {
            try engine.renderOffline(frameCount: 512, into: buffer)
            peak = max(peak, buffer.interleaved().map(abs).max() ?? 0)
        }
        #expect(peak > 0.01)
    }
}
