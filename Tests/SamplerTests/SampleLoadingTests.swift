import AudioGraph
import Foundation
import MIDICore
import Sequencer
import TestSupport
import Testing

@testable import Sampler

private func preset(_ bank: UInt16, _ program: UInt8, font: Int = 0) -> PresetUsage.Preset {
    PresetUsage.Preset(soundFont: font, bank: bank, program: program)
}

/// Peak of `frames` rendered after `messages` are applied at once.
private func peak(_ sampler: SamplerNode, after messages: [MIDIMessage], frames: Int = 8_192) throws -> Float {
    for message in messages { try sampler.sendMIDI(message) }
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    sampler.render(into: buffer, inputs: .none, frameCount: frames, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
    sampler.allSoundOff()
    return buffer.samples(channel: 0).map(abs).max() ?? 0
}

@Suite("Loading samples on demand", .serialized)
struct SampleLoadingTests {
    @Test("the usage is what FluidSynth selects: bank fallbacks, drums, overrides, muted channels, resets")
    func usageFollowsFluidSynth() throws {
        var settings = dryLeadSettings()
        settings.sampleLoading = .onDemand
        settings.programOverrides = [SamplerNode.ProgramOverride(channel: 4, program: 56)]
        settings.mutedChannels = [5]
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: bundledFont)
        let usage = try sampler.presetUsage(of: [
            .programChange(channel: 0, program: 24), on(60),
            // Bank 5 does not exist: FluidSynth falls back to bank 0.
            .controlChange(channel: 1, controller: 0, value: 5), .programChange(channel: 1, program: 10),
            on(62, channel: 1),
            on(38, channel: 9),  // drums, bank 128
            .programChange(channel: 2, program: 40),  // selected, never played
            on(64, channel: 3),  // no program change: the default piano
            .programChange(channel: 4, program: 99), on(60, channel: 4),  // the override wins
            .programChange(channel: 5, program: 73), on(60, channel: 5),  // muted: selected all the same
        ])
        #expect(
            usage.presets
                == [
                    preset(0, 24), preset(0, 10), preset(128, 0), preset(0, 40), preset(0, 0), preset(0, 56),
                    preset(0, 73),
                ])
        #expect(usage.firstPresets[0] == preset(0, 24))
        #expect(usage.firstPresets[1] == preset(0, 10))
        #expect(usage.firstPresets[4] == preset(0, 56))
        #expect(usage.firstPresets[9] == preset(128, 0))
        #expect(usage.firstPresets[6] == nil)
        // A GM System On selects the defaults again on every channel.
        let reset = try sampler.presetUsage(of: [
            .programChange(channel: 0, program: 24), .systemExclusive([0x7E, 0x7F, 0x09, 0x01]),
        ])
        #expect(reset.presets == [preset(0, 24), preset(0, 0), preset(128, 0), preset(0, 56)])
    }

    @Test("a sampler loading on demand selects nothing until the song's samples are read, then plays them from memory")
    func songsSamplesInMemory() throws {
        try withTemporaryFolder("sample-loading") { folder in
            let copy = folder + "/font.sf2"
            try FileManager.default.copyItem(atPath: bundledFont, toPath: copy)
            var settings = dryLeadSettings()
            settings.sampleLoading = .onDemand
            let sampler = try SamplerNode(settings: settings)
            try sampler.loadSoundFont(at: copy)
            // Nothing is selected (nor read) before the samples are loaded.
            #expect(try peak(sampler, after: [on(60)]) == 0)
            let song = MusicSequence(
                file: makeFile(tracks: [[(0, .programChange(channel: 0, program: 24)), (0, on(60)), (480, off(60))]]))
            try sampler.loadSamples(for: try sampler.presetUsage(of: song))
            #expect(sampler.program(onChannel: 0).map { $0.program } == 24)
            // With the file gone, the song's preset still plays: its samples are in memory. (How
            // little else is in memory is measured on a large font by the CLI's tests.)
            try FileManager.default.removeItem(atPath: copy)
            #expect(try peak(sampler, after: [on(60)]) > 0.01)
            // Once reading failed, the sampler says so rather than play presets half read.
            let other = try sampler.presetUsage(of: [.programChange(channel: 1, program: 0)])
            #expect(throws: SoundFontError.self) { try sampler.loadSamples(for: other) }
            #expect(throws: SoundFontError.self) { try sampler.loadSamples(for: other) }
        }
    }

    @Test("fixed presets: program changes, bank selects and resets leave the loaded presets in place")
    func fixedPresets() throws {
        var settings = dryLeadSettings()
        settings.sampleLoading = .onDemand
        settings.ignoresPresetChanges = true
        settings.programOverrides = [SamplerNode.ProgramOverride(channel: 0, program: 24)]
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: bundledFont)
        let usage = try sampler.presetUsage(of: [])
        #expect(usage.presets == [preset(0, 24)])
        try sampler.loadSamples(for: usage)
        #expect(try peak(sampler, after: [on(60)]) > 0.01)
        let changes: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 0, value: 1), .programChange(channel: 0, program: 0),
            .systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .systemReset,
        ]
        #expect(try peak(sampler, after: changes + [on(60)]) > 0.01)
        #expect(sampler.program(onChannel: 0).map { $0.program } == 24)
        // Channels without an override have no preset: silent, whatever they are sent.
        #expect(try peak(sampler, after: [.programChange(channel: 1, program: 0), on(60, channel: 1)]) == 0)
    }

    @Test(
        "SF3 samples are decoded by helper threads and the render is the whole font's",
        .enabled(if: SoundFontDiscovery.isFile(sf3Font), "Debian's fluidr3mono-gm-soundfont is not installed: skipped"))
    func sf3OnDemandMatchesWhole() throws {
        let messages: [MIDIMessage] = [
            .programChange(channel: 0, program: 0), .programChange(channel: 1, program: 40),
            .programChange(channel: 2, program: 73), on(60), on(67, channel: 1), on(72, channel: 2), on(38, channel: 9),
        ]
        var onDemandSettings = dryLeadSettings()
        onDemandSettings.sampleLoading = .onDemand
        let onDemand = try SamplerNode(settings: onDemandSettings)
        try onDemand.loadSoundFont(at: sf3Font)
        let usage = try onDemand.presetUsage(of: messages)
        #expect(usage.presets.count == 4)
        try onDemand.loadSamples(for: usage, threads: 2)
        let whole = try SamplerNode(settings: dryLeadSettings())
        try whole.loadSoundFont(at: sf3Font)
        var buffers: [AudioBuffer] = []
        for sampler in [onDemand, whole] {
            for message in messages { try sampler.sendMIDI(message) }
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 16_384)
            sampler.render(
                into: buffer, inputs: .none, frameCount: 16_384, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
            buffers.append(buffer)
        }
        let difference = zip(buffers[0].samples(channel: 0), buffers[1].samples(channel: 0)).map { abs($0 - $1) }.max()
        #expect((buffers[1].samples(channel: 0).map(abs).max() ?? 0) > 0.01)
        #expect((difference ?? 1) < 1e-4)
    }
}
