import AudioFiles
import AudioGraph
import Effects
import Foundation
import MIDICore
import PianolaSupport
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
        try withTemporaryFolder("library") { directory in
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

    @Test("file locations: every path-taking call also takes a file URL, and refuses other URLs by name")
    func fileURLs() async throws {
        try await withTemporaryFolder("urls") { folder in
            let directory = URL(fileURLWithPath: folder)
            let song = directory.appendingPathComponent("my song #1.mid")
            try makeFile(tracks: [[(0, on(60)), (960, off(60))]]).write(to: song)
            #expect(try MIDIFile.read(contentsOf: song).file.tracks.count == 2)
            #expect(try MusicSequence(contentsOf: song).noteCount == 1)
            let sequencer = AudioSequencer(audioEngine: AudioEngine())
            try sequencer.load(from: song)
            #expect(sequencer.sequence?.noteCount == 1)

            let font = URL(fileURLWithPath: bundledFontPath)
            let sampler = try SamplerNode()
            let loadNow: () throws -> Void = { try sampler.loadSoundFont(at: font) }  // the synchronous call
            try loadNow()
            try await sampler.loadSoundFont(at: font)
            #expect(try SoundFontInfo.load(url: font).presets.isEmpty == false)

            var options = RenderOptions()
            options.encoding = .f32
            options.tail = .seconds(0.2)
            let renderer = try OfflineRenderer(soundFonts: [font], options: options)
            let output = directory.appendingPathComponent("my song #1.wav")
            let summary = try renderer.render(try MusicSequence(contentsOf: song), to: output)
            #expect(summary.outputPath == output.path(percentEncoded: false))
            let audio = try AudioFile.read(from: output)
            #expect(audio.samples == (try readFloatWAV(output.path(percentEncoded: false))))
            let copy = directory.appendingPathComponent("copy.wav")
            try AudioFile.write(audio, to: copy, encoding: .f32)
            #expect(try AudioFile.read(from: copy).samples == audio.samples)

            let remote = try #require(URL(string: "https://example.com/song.mid"))
            #expect(throws: MIDIFileError.unreadable(path: "https://example.com/song.mid", reason: URL.notAFileReason))
            {
                try MusicSequence(contentsOf: remote)
            }
            await #expect(throws: SoundFontError.self) { try await sampler.loadSoundFont(at: remote) }
            #expect(throws: AudioFileError.self) { try AudioFile.read(from: remote) }
            #expect(throws: RenderError.self) { try renderer.render(try MusicSequence(contentsOf: song), to: remote) }
        }
    }

    @Test("one type per quantity: channels are UInt8 and rates Double across sampler, writer and engine")
    func consistentTypes() throws {
        let channel: UInt8 = 9
        let sampler = try SamplerNode()
        try sampler.loadDefaultSoundFont()
        try sampler.selectProgram(0, bank: 128, onChannel: channel)
        try sampler.startNote(36, withVelocity: 100, onChannel: channel)
        #expect(sampler.program(onChannel: channel)?.bank == 128)
        let format = AudioFormat.stereo(sampleRate: 44_100)
        try withTemporaryFolder("types") { folder in
            let path = folder + "/rate.wav"
            let writer = try AudioFileWriter(path: path, sampleRate: format.sampleRate)
            try writer.finish()
            #expect(try AudioFile.read(from: path).sampleRate == format.sampleRate)
            var options = RenderOptions()
            options.sampleRate = format.sampleRate
            options.mutedChannels = [channel]
            #expect(options.sampleRate == 44_100)
        }
    }
}
