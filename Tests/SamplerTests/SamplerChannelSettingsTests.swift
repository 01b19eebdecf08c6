import AudioGraph
import MIDICore
import Testing

@testable import Sampler

/// Renders `messages` (all at the start) through a sampler with `settings` and the bundled font:
/// the first 8192 frames of the left channel.
private func render(_ messages: [MIDIMessage], settings: SamplerNode.Settings) throws -> [Float] {
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: bundledFont)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 8_192)
    for message in messages { sampler.receive(message, atFrameOffset: 0) }
    sampler.render(into: buffer, inputs: .none, frameCount: 8_192, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
    return Array(UnsafeBufferPointer(start: buffer.channel(0), count: 8_192))
}

@Suite("Sampler channel settings: program overrides and muted channels")
struct SamplerChannelSettingsTests {
    @Test("an overridden channel keeps its program: the song's program changes and bank selects are ignored")
    func programOverride() throws {
        var overridden = dryLeadSettings()
        overridden.programOverrides = [SamplerNode.ProgramOverride(channel: 0, program: 80)]
        let song: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 0, value: 1), .programChange(channel: 0, program: 0),
            .noteOn(channel: 0, note: 69, velocity: 100),
        ]
        let asOverridden = try render(song, settings: overridden)
        let lead = try render(
            [.programChange(channel: 0, program: 80), .noteOn(channel: 0, note: 69, velocity: 100)],
            settings: dryLeadSettings())
        let piano = try render(song, settings: dryLeadSettings())
        #expect(asOverridden == lead)
        #expect(asOverridden != piano)
        // A GM reset in the song keeps the override too.
        let reset = try render(
            [.systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .noteOn(channel: 0, note: 69, velocity: 100)],
            settings: overridden)
        #expect(reset == lead)
    }

    @Test("drum kits by bank 128 on channel 10; a muted channel's notes do not sound, others do")
    func mutedChannels() throws {
        var muted = dryLeadSettings()
        muted.mutedChannels = [0]
        let notes: [MIDIMessage] = [.noteOn(channel: 0, note: 69, velocity: 100)]
        #expect(try render(notes, settings: muted).allSatisfy { $0 == 0 })
        #expect(try render(notes, settings: dryLeadSettings()).contains { $0 != 0 })
        let drums: [MIDIMessage] = [.noteOn(channel: 9, note: 38, velocity: 100)]
        #expect(try render(drums, settings: muted).contains { $0 != 0 })
        var kit = dryLeadSettings()
        kit.programOverrides = [SamplerNode.ProgramOverride(channel: 9, bank: 128, program: 0)]
        #expect(try render(drums, settings: kit) == render(drums, settings: dryLeadSettings()))
    }
}
