import Foundation
import MIDICore
import PianolaSupport
import SMF
import Sampler
import Sequencer
import TestSupport
import Testing

@testable import Sessions

let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
let bundledFontPath = checkout + "/SoundFonts/PianolaGM.sf2"

/// A format-1 file, 480 PPQN at 120 BPM: per channel, `notes[channel]` quarter notes in a row
/// (on channel 10, drum notes), each channel with its own program.
func busyFile(notes: [Int: Int], seed: UInt64 = 1) -> MIDIFile {
    var random = SplitMix(seed: seed)
    var tracks: [MIDIFile.Track] = []
    for (channel, count) in notes.sorted(by: { $0.key < $1.key }) {
        let c = UInt8(channel)
        var events = [MIDIFile.Event(tick: 0, .channel(.programChange(channel: c, program: UInt8(channel * 7 % 128))))]
        events.append(MIDIFile.Event(tick: 0, .channel(.controlChange(channel: c, controller: 91, value: 60))))
        for index in 0..<count {
            let key = channel == 9 ? UInt8([36, 38, 42, 46][index % 4]) : UInt8(48 + Int(random.next() % 24))
            let tick = index * 240
            events.append(MIDIFile.Event(tick: tick, .channel(.noteOn(channel: c, note: key, velocity: 100))))
            events.append(MIDIFile.Event(tick: tick + 200, .channel(.noteOff(channel: c, note: key, velocity: 0))))
        }
        events.sort { $0.tick < $1.tick }
        events.append(MIDIFile.Event(tick: (events.last?.tick ?? 0) + 1, .meta(.endOfTrack)))
        tracks.append(MIDIFile.Track(events: events))
    }
    return MIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: tracks)
}

/// Reads back a float WAV written by the renderer: interleaved stereo samples.
func readFloatWAV(_ path: String) throws -> [Float] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    guard let range = data.range(of: Data("data".utf8)) else { return [] }
    let start = range.upperBound + 4
    return data[start...].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

@Suite("Rendering one file on several threads")
struct ChannelSplitTests {
    let oneVoice: ChannelSplit.VoiceProbe = { _, _, _, _, _ in [(isLooped: true, releaseSeconds: 0.2)] }

    @Test("busy channels are shared out evenly, each exactly once; idle channels go with the first part")
    func evenSplit() {
        let sequence = MusicSequence(file: busyFile(notes: [0: 40, 1: 40, 2: 40, 3: 40, 4: 20, 5: 20]))
        let plan = ChannelSplit.plan(for: sequence, parts: 2, voices: oneVoice)
        #expect(plan?.count == 2)
        guard let plan else { return }
        #expect(plan[0].isDisjoint(with: plan[1]))
        #expect(plan[0].union(plan[1]) == Set(0..<16))
        let loads = ChannelSplit.channelLoads(of: sequence, voices: oneVoice)
        let shares = plan.map { part in part.reduce(0) { $0 + loads[$1] } }
        #expect(abs(shares[0] - shares[1]) <= loads.max()! * 0.5, "\(shares)")
        #expect(plan[0].contains(15) && !plan[1].contains(15))
    }

    @Test("more voices per note weigh more: a channel with four-voice notes balances four others")
    func voicesWeigh() {
        let sequence = MusicSequence(file: busyFile(notes: [0: 40, 1: 40, 2: 40, 3: 40, 4: 40]))
        let plan = ChannelSplit.plan(for: sequence, parts: 2) { channel, _, _, _, _ in
            Array(repeating: (isLooped: true, releaseSeconds: 0.2), count: channel == 0 ? 4 : 1)
        }
        #expect(plan?.first { $0.contains(0) }?.intersection(0..<5) == [0])
    }

    @Test("a song on one channel, or played mostly on one, is not split")
    func unsplittable() {
        #expect(
            ChannelSplit.plan(for: MusicSequence(file: busyFile(notes: [3: 50])), parts: 2, voices: oneVoice) == nil)
        let lopsided = MusicSequence(file: busyFile(notes: [0: 200, 1: 10, 2: 10]))
        #expect(ChannelSplit.plan(for: lopsided, parts: 2, voices: oneVoice) == nil)
        #expect(ChannelSplit.plan(for: lopsided, parts: 1, voices: oneVoice) == nil)
    }

    @Test("a probe of the bundled font: GM programs start voices, a looped organ releases, drums do not loop")
    func probe() throws {
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: bundledFontPath)
        let organ = sampler.voiceShapes(forNote: 60, velocity: 100, bank: 0, program: 16, onChannel: 0)
        #expect(!organ.isEmpty && organ.allSatisfy(\.isLooped))
        let snare = sampler.voiceShapes(forNote: 38, velocity: 100, bank: 0, program: 0, onChannel: 9)
        #expect(!snare.isEmpty && snare.allSatisfy { !$0.isLooped })
        #expect(
            sampler.voiceShapes(forNote: 60, velocity: 100, bank: 0, program: 16, onChannel: 0).count == organ.count)
    }

    @Test("--threads 2 renders the same music as one thread (reverb and chorus on)")
    func splitRenderMatches() throws {
        try withTemporaryFolder("split") { directory in
            var counts: [Int: Int] = [:]
            for channel in 0..<12 { counts[channel] = 24 + channel * 3 }
            let file = busyFile(notes: counts)
            var options = RenderOptions()
            options.encoding = .f32
            let one = try OfflineRenderer(soundFont: bundledFontPath, options: options).render(
                file, to: directory + "/one.wav")
            options.threads = 2
            let two = try OfflineRenderer(soundFont: bundledFontPath, options: options)
            #expect(ChannelSplit.plan(for: MusicSequence(file: file), parts: 2, voices: oneVoice) != nil)
            let summary = try two.render(file, to: directory + "/two.wav")
            #expect(summary.frames == one.frames)
            let a = try readFloatWAV(directory + "/one.wav")
            let b = try readFloatWAV(directory + "/two.wav")
            #expect(a.count == b.count && a.count == one.frames * 2)
            var signal = 0.0
            var error = 0.0
            for index in a.indices {
                signal += Double(a[index] * a[index])
                error += Double((a[index] - b[index]) * (a[index] - b[index]))
            }
            // FluidSynth's voices, reverb and chorus are linear, so the two synthesizers' sum is the
            // one synthesizer's output up to rounding and a voice slot's first block (see
            // BENCHMARKS.md): far above 40 dB signal-to-difference.
            let snr = 10 * log10(signal / max(error, 1e-30))
            #expect(snr > 40, "signal-to-difference \(snr) dB")
            // A second file on the same renderer works as well (fonts moved, not lost).
            #expect(try two.render(file, to: directory + "/again.wav").frames == one.frames)
            #expect(try readFloatWAV(directory + "/again.wav") == b)
            // Without a thread for the second part, it renders on the render's thread, the same music.
            let threadless = try SystemThread.$refusesThreads.withValue(true) {
                try two.render(file, to: directory + "/threadless.wav")
            }
            #expect(threadless.frames == one.frames)
            #expect(try readFloatWAV(directory + "/threadless.wav") == b)
        }
    }
}
