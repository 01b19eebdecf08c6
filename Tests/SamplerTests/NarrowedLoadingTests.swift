import AudioGraph
import Foundation
import MIDICore
import SMF
import Sequencer
import TestSupport
import Testing

@testable import Sampler

/// Plays `sequence` through `sampler`, events in the order the music player and the preset probe
/// merge them, 16 frames per tick (at most `limit` frames); returns the left channel.
private func play(_ sequence: MusicSequence, through sampler: SamplerNode, limit: Int = 441_000) throws -> [Float] {
    var events: [(tick: Int, order: Int, track: Int, index: Int, message: MIDIMessage)] = []
    for (track, content) in sequence.tracks.enumerated() {
        for (index, event) in content.events.enumerated() {
            events.append((event.tick, MusicSequence.orderClass(event.message), track, index, event.message))
        }
    }
    events.sort { ($0.tick, $0.order, $0.track, $0.index) < ($1.tick, $1.order, $1.track, $1.index) }
    var output: [Float] = []
    var tick = 0
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_096)
    for event in events {
        var frames = min((event.tick - tick) * 16, limit - output.count)
        while frames > 0 {
            let count = min(frames, 4_096)
            sampler.render(
                into: buffer, inputs: .none, frameCount: count,
                time: AudioTime(sampleTime: Int64(output.count), sampleRate: 44_100))
            output += buffer.samples(channel: 0).prefix(count)
            frames -= count
        }
        tick = event.tick
        guard output.count < limit else { break }
        try sampler.sendMIDI(event.message)
    }
    return output
}

private func onDemandSampler(_ font: String) throws -> SamplerNode {
    var settings = dryLeadSettings()
    settings.sampleLoading = .onDemand
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: font)
    return sampler
}

private func peak(_ sampler: SamplerNode, key: UInt8, channel: UInt8 = 0, velocity: UInt8 = 100) throws -> Float {
    try sampler.sendMIDI(on(key, channel: channel, velocity: velocity))
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 8_192)
    sampler.render(into: buffer, inputs: .none, frameCount: 8_192, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
    sampler.allSoundOff()
    return buffer.samples(channel: 0).map(abs).max() ?? 0
}

@Suite("Reading only the samples a song's notes reach", .serialized)
struct NarrowedLoadingTests {
    @Test("played notes: a set of key and velocity pairs, queried by ranges")
    func playedNotes() {
        var notes = PlayedNotes()
        #expect(notes.isEmpty)
        #expect(!notes.containsAny(keys: 0...127, velocities: 0...127))
        notes.insert(key: 60, velocity: 100)
        notes.insert(key: 127, velocity: 127)
        notes.insert(key: 128, velocity: 1)  // ignored
        notes.insert(key: 0, velocity: -1)  // ignored
        #expect(notes.count == 2)
        #expect(notes.contains(key: 60, velocity: 100) && !notes.contains(key: 60, velocity: 99))
        #expect(notes.containsAny(keys: 60...60, velocities: 100...100))
        #expect(!notes.containsAny(keys: 61...126, velocities: 0...127))
        #expect(!notes.containsAny(keys: 0...127, velocities: 0...99))
        #expect(!notes.containsAny(keys: 0...59, velocities: 0...127))
        #expect(notes.containsAny(keys: 100...300, velocities: 127...200))
        #expect(!notes.containsAny(keys: 128...300, velocities: 0...127))
        var other = PlayedNotes()
        other.insert(key: 1, velocity: 2)
        #expect(notes.union(other).count == 3 && notes.union(PlayedNotes()) == notes)
    }

    @Test("a song's usage has every note each preset plays, not the probing notes; tuning or live input has not")
    func usageNotes() throws {
        let sampler = try onDemandSampler(bundledFont)
        let song = MusicSequence(
            file: makeFile(tracks: [
                [
                    (0, .programChange(channel: 0, program: 24)), (0, on(60, velocity: 90)), (10, on(64)),
                    (20, .programChange(channel: 1, program: 40)),  // selected, never played
                    (30, on(38, channel: 9, velocity: 127)),
                ]
            ]))
        let usage = try sampler.presetUsage(of: song)
        #expect(usage.hasEveryNote)
        let guitar = PresetUsage.Preset(soundFont: 0, bank: 0, program: 24)
        #expect(usage.playedNotes[guitar]?.count == 2)
        #expect(usage.playedNotes[guitar]?.contains(key: 60, velocity: 90) == true)
        #expect(usage.playedNotes[PresetUsage.Preset(soundFont: 0, bank: 128, program: 0)]?.count == 1)
        #expect(usage.presets.contains(PresetUsage.Preset(soundFont: 0, bank: 0, program: 40)))
        #expect(usage.playedNotes[PresetUsage.Preset(soundFont: 0, bank: 0, program: 40)] == nil)
        // A MIDI Tuning Standard single note change (key 60 to 62): FluidSynth picks samples by tuned keys.
        let tuned = MusicSequence(
            file: makeFile(tracks: [
                [(0, .systemExclusive([0x7F, 0x7F, 0x08, 0x02, 0, 1, 60, 62, 0, 0])), (0, on(60))]
            ]))
        #expect(try !sampler.presetUsage(of: tuned).hasEveryNote)
        #expect(try !sampler.presetUsage(of: [on(60)]).hasEveryNote)
        #expect(!usage.union(try sampler.presetUsage(of: [on(60)])).hasEveryNote)
    }

    @Test("the usage has the keys the sampler gets: transposed (drums not); a tuning by RPN has not every note")
    func transposeAndTuning() throws {
        let sampler = try onDemandSampler(bundledFont)
        let song = MusicSequence(file: makeFile(tracks: [[(0, on(60)), (0, on(38, channel: 9)), (10, off(60))]]))
        let usage = try sampler.presetUsage(of: song, transposedBy: 24)
        #expect(
            usage.playedNotes[PresetUsage.Preset(soundFont: 0, bank: 0, program: 0)]?.contains(key: 84, velocity: 100)
                == true)
        #expect(usage.playedNotes[PresetUsage.Preset(soundFont: 0, bank: 0, program: 0)]?.count == 1)
        #expect(
            usage.playedNotes[PresetUsage.Preset(soundFont: 0, bank: 128, program: 0)]?.contains(key: 38, velocity: 100)
                == true)
        // A transposed song narrowed: the shifted key sounds (a zone the file's key does not reach).
        try sampler.loadSamples(for: usage, narrowing: true)
        #expect(try peak(sampler, key: 84) > 0.01)
        // The tuning program RPN (3) gives the channel a tuning: samples are then picked by tuned key.
        let retuned = MusicSequence(
            file: makeFile(tracks: [
                [
                    (0, .controlChange(channel: 0, controller: 101, value: 0)),
                    (0, .controlChange(channel: 0, controller: 100, value: 3)),
                    (0, .controlChange(channel: 0, controller: 6, value: 0)), (0, on(60)),
                ]
            ]))
        #expect(try !onDemandSampler(bundledFont).presetUsage(of: retuned).hasEveryNote)
    }

    @Test("a font FluidSynth would refuse, or index as it does not, gets no subset: it is read whole")
    func malformedFonts() throws {
        var notes = PlayedNotes()
        notes.insert(key: 60, velocity: 100)
        let piano = [SoundFontSubset.PresetKey(bank: 0, program: 0): notes]
        let original = DamagedSoundFont(contentsOf: bundledFont)
        try withTemporaryFolder("damaged-font") { folder in
            #expect(SoundFontSubset(path: try original.write("whole.sf2", in: folder), notes: piano) != nil)
            let chunks = original.chunks(inList: "pdta")
            let igen = try #require(chunks["igen"])
            let ibag = try #require(chunks["ibag"])
            // A zone naming a sample past the last one.
            var badSample = original
            let records = igen.size / 4
            let sampleGenerator = try #require(
                (0..<records).first { original.bytes[igen.offset + 8 + $0 * 4] == 53 })
            badSample.bytes[igen.offset + 8 + sampleGenerator * 4 + 2] = 0xFF
            badSample.bytes[igen.offset + 8 + sampleGenerator * 4 + 3] = 0x7F
            #expect(SoundFontSubset(path: try badSample.write("sample.sf2", in: folder), notes: piano) == nil)
            #expect(throws: SoundFontError.self) {
                try onDemandSampler(try badSample.write("sample2.sf2", in: folder))
            }
            // Generator indices starting at 1: FluidSynth counts differences, not positions.
            var shifted = original
            shifted.bytes[ibag.offset + 8] = 1
            #expect(SoundFontSubset(path: try shifted.write("shifted.sf2", in: folder), notes: piano) == nil)
            // Preset bag indices going down.
            var scrambled = original
            scrambled.scrambleBagIndices()
            #expect(SoundFontSubset(path: try scrambled.write("scrambled.sf2", in: folder), notes: piano) == nil)
        }
    }

    @Test("the subset keeps the zones the notes reach: more notes, more zones; not a SoundFont, no subset")
    func subsetZones() throws {
        let piano = SoundFontSubset.PresetKey(bank: 0, program: 0)
        var one = PlayedNotes()
        one.insert(key: 60, velocity: 100)
        var keyboard = PlayedNotes()
        for key in 0..<128 { for velocity in 1..<128 { keyboard.insert(key: key, velocity: velocity) } }
        let small = try #require(SoundFontSubset(path: bundledFont, notes: [piano: one]))
        let large = try #require(SoundFontSubset(path: bundledFont, notes: [piano: keyboard]))
        #expect(small.zoneCount.kept >= 1)
        #expect(small.zoneCount.kept < large.zoneCount.kept)
        #expect(large.zoneCount.kept < large.zoneCount.total)
        #expect(small.size < large.size)
        // The real bytes up to the preset data stay where they were.
        #expect(small.preservedLength == large.preservedLength && small.preservedLength > 1_000_000)
        try withTemporaryFolder("narrowed-loading") { folder in
            #expect(FileManager.default.createFile(atPath: folder + "/x.sf2", contents: Data("RIFF not a font".utf8)))
            #expect(SoundFontSubset(path: folder + "/x.sf2", notes: [piano: one]) == nil)
            #expect(SoundFontSubset(path: folder + "/missing.sf2", notes: [piano: one]) == nil)
        }
    }

    @Test("a narrowed sampler plays the song's notes bit for bit, others of its presets not; a later load reads whole")
    func narrowedSampler() throws {
        let song = MusicSequence(
            file: makeFile(tracks: [
                [
                    (0, .programChange(channel: 0, program: 0)), (0, on(60)), (100, off(60)), (100, on(40, channel: 9)),
                    (200, on(62, velocity: 40)), (400, off(62)),
                ]
            ]))
        let narrowed = try onDemandSampler(bundledFont)
        let whole = try onDemandSampler(bundledFont)
        try narrowed.loadSamples(for: narrowed.presetUsage(of: song), narrowing: true)
        try whole.loadSamples(for: whole.presetUsage(of: song))
        let expected = try play(song, through: whole)
        #expect((expected.map(abs).max() ?? 0) > 0.01)
        #expect(try play(song, through: narrowed) == expected)
        // A key the song never plays, far from its zones: read whole, it sounds; narrowed, silent.
        for sampler in [whole, narrowed] { sampler.allSoundOff() }
        #expect(try peak(whole, key: 108) > 0.01)
        #expect(try peak(narrowed, key: 108) == 0)
        // Another usage (live input here) reads the fonts whole again.
        try narrowed.loadSamples(for: narrowed.presetUsage(of: [.programChange(channel: 0, program: 0)]))
        #expect(try peak(narrowed, key: 108) > 0.01)
    }

    @Test("presets only: the probe finds the song's presets, narrowing reads their zones, more songs add theirs")
    func presetsOnly() throws {
        var settings = dryLeadSettings()
        settings.sampleLoading = .onDemand
        let first = MusicSequence(file: makeFile(tracks: [[(0, on(60)), (100, off(60))]]))
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: bundledFont, presetsOnly: true)
        #expect(sampler.fontsReadFor != nil)
        let usage = try sampler.presetUsage(of: first)
        let piano = PresetUsage.Preset(soundFont: 0, bank: 0, program: 0)
        #expect(usage.presets == [piano] && usage.playedNotes[piano]?.count == 1)
        try sampler.loadSamples(for: usage, narrowing: true)
        let whole = try onDemandSampler(bundledFont)
        try whole.loadSamples(for: whole.presetUsage(of: first))
        #expect(try play(first, through: sampler) == play(first, through: whole))
        for node in [sampler, whole] { node.allSoundOff() }
        #expect(try peak(sampler, key: 108) == 0)
        // A second song, narrowed too: the first song's notes and the second's.
        let second = MusicSequence(file: makeFile(tracks: [[(0, on(108)), (100, off(108))]]))
        try sampler.loadSamples(for: sampler.presetUsage(of: second), narrowing: true)
        #expect(try peak(sampler, key: 108) > 0.01)
        #expect(try peak(sampler, key: 60) > 0.01)
        #expect(try peak(sampler, key: 30) == 0)
        // Presets only, then a load without narrowing: whole.
        let plain = try SamplerNode(settings: settings)
        try plain.loadSoundFont(at: bundledFont, presetsOnly: true)
        try plain.loadSamples(for: plain.presetUsage(of: first))
        #expect(plain.fontsReadFor == nil)
        #expect(try peak(plain, key: 30) > 0.01)
    }

    @Test(
        "corpus songs sound the same narrowed (bundled font, and FluidR3 when installed)",
        .enabled(if: isDirectory(corpusRoot), "shared corpus not found at \(corpusRoot): skipped"))
    func corpusSongs() throws {
        let folder = corpusRoot + "/jazz-soft-test-midi-files/"
        let names = [
            "test-all-gm-sounds.mid", "test-all-gs-sounds.mid", "test-control-40-damper.mid",
            "test-control-41-portamento.mid", "test-sysex-gs-40-1x-15-drum-part-change.mid",
            "test-sysex-7x-08-0x-scale-tuning.mid", "test-note-on-velocity.mid", "test-multichannel-chords-3.mid",
        ]
        let fonts = [bundledFont] + (SoundFontDiscovery.isFile(sf2Font) ? [sf2Font] : [])
        for font in fonts {
            for name in names {
                let sequence = MusicSequence(file: try MIDIFile.read(path: folder + name).file)
                let narrowed = try onDemandSampler(font)
                let whole = try onDemandSampler(font)
                try narrowed.loadSamples(for: narrowed.presetUsage(of: sequence), narrowing: true)
                try whole.loadSamples(for: whole.presetUsage(of: sequence))
                let expected = try play(sequence, through: whole)
                #expect((expected.map(abs).max() ?? 0) > 0.001, "\(name) is silent")
                #expect(try play(sequence, through: narrowed) == expected, "\(name) with \(font)")
            }
        }
    }
}

/// Debian's FluidR3_GM (fluid-soundfont-gm), when installed.
private let sf2Font = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
