import AudioGraph
import Effects
import Foundation
import MIDICore
import SMF
import Sampler
import Sequencer
import TestSupport
import Testing

@testable import Sessions

@Suite("Answers a newcomer looks for: a sequence's facts, the default font, a render with effect nodes")
struct LibraryAnswersTests {
    @Test("MusicSequence gives tempo, tempos, note count and track names directly")
    func sequenceFacts() throws {
        var file = makeFile(
            tempos: [(0, 500_000), (960, 400_000)],
            tracks: [[(0, on(60)), (480, off(60)), (960, on(62)), (1_440, off(62))]])
        file.tracks[1].events.insert(MIDIFile.Event(tick: 0, .meta(.text(.trackName, Array("Melody".utf8)))), at: 0)
        let sequence = MusicSequence(file: file)
        #expect(sequence.tempo == 120)
        #expect(sequence.tempos.map(\.beatsPerMinute) == [120, 150])
        #expect(sequence.tempos.map(\.seconds) == [0, 1])
        #expect(sequence.noteCount == 2)
        #expect(sequence.trackNames.contains("Melody"))
    }

    @Test("loading the default SoundFont is one call, and it plays")
    func defaultSoundFont() throws {
        let sampler = try SamplerNode()
        try sampler.loadDefaultSoundFont()
        try sampler.selectProgram(0, onChannel: 0)
        #expect(sampler.program(onChannel: 0)?.program == 0)
    }

    @Test("OfflineRenderer renders a sequence through effect nodes made in code, as through the same specs")
    func renderWithNodes() throws {
        let directory = makeTemporaryDirectory("pianola-library")
        let sequence = MusicSequence(file: makeFile(tracks: [[(0, on(60)), (960, off(60))]]))
        var options = RenderOptions()
        options.encoding = .f32
        options.tail = .seconds(0.5)
        options.effects = [try EffectSpec.parse("filter:type=lowPass,freq=300")]
        let renderer = try OfflineRenderer(soundFont: bundledFontPath, options: options)
        _ = try renderer.render(sequence, to: directory + "/specs.wav")
        let node = FilterNode(type: .lowPass, frequency: 300)
        _ = try renderer.render(sequence, to: directory + "/nodes.wav", effects: [node])
        let plain = try renderer.render(sequence, to: directory + "/plain.wav", effects: [])
        let specs = try readFloatWAV(directory + "/specs.wav")
        #expect(specs == (try readFloatWAV(directory + "/nodes.wav")))
        #expect(specs != (try readFloatWAV(directory + "/plain.wav")))
        #expect(plain.frames > 0 && plain.loudness == nil)
    }
}
