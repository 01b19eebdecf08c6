import MIDICore
import SMF
import Sequencer
import Testing

@Suite("MIDIRecorder")
struct MIDIRecorderTests {
    @Test("keeps channel messages and SysEx at their arrival times, at 120 BPM and 1920 ticks per quarter")
    func recordsAtArrivalTimes() throws {
        let start: UInt64 = 5_000_000_000
        let recorder = MIDIRecorder(start: start)
        recorder.record(.noteOn(channel: 0, note: 60, velocity: 100), at: start + 500_000_000)
        recorder.record(.activeSensing, at: start + 600_000_000)
        recorder.record(.systemExclusive([0x7E, 0x7F, 0x09, 0x01]), at: start + 750_130_000)
        recorder.record(.noteOff(channel: 0, note: 60, velocity: 0), at: start + 1_000_260_000)
        #expect(recorder.count == 3)  // active sensing is not kept
        #expect(recorder.ticksPerQuarterNote == 1920)
        let file = try MIDIFile.read(bytes: recorder.midiFile().serialized()).file
        #expect(file.format == .singleTrack)
        #expect(file.division == .ticksPerQuarterNote(1920))
        let events = file.tracks[0].events.filter {
            if case .meta = $0.payload { return false }
            return true
        }
        // 3840 ticks per second: 0.5 s = 1920; 0.75013 s = 2880.5 → 2880 or 2881; 1.00026 s = 3841.
        #expect(events.map(\.tick) == [1920, 2880, 3841] || events.map(\.tick) == [1920, 2881, 3841])
        #expect(events[0].payload == .channel(.noteOn(channel: 0, note: 60, velocity: 100)))
        #expect(events[1].payload == .sysEx([0x7E, 0x7F, 0x09, 0x01, 0xF7]))
        let map = TempoMap(file: file)
        #expect(abs(map.seconds(forTick: 3841) - 1.00026) < 0.00013)
    }

    @Test("a tempo of 0, below 0, NaN or infinite and an impossible division are clamped: the file is valid")
    func clampsTempoAndDivision() throws {
        let slowest = 60_000_000 / 16_777_215.0
        let cases: [(beatsPerMinute: Double, ticks: Int, expected: Double, tempo: Int, division: Int)] = [
            (0, 1_920, slowest, 16_777_215, 1_920), (-120, 1_920, slowest, 16_777_215, 1_920),
            (.nan, 0, 120, 500_000, 1), (.infinity, 100_000, 60_000_000, 1, 32_767),
            (-.infinity, -5, slowest, 16_777_215, 1),
        ]
        for item in cases {
            let recorder = MIDIRecorder(start: 0, beatsPerMinute: item.beatsPerMinute, ticksPerQuarterNote: item.ticks)
            #expect(recorder.beatsPerMinute == item.expected, "\(item.beatsPerMinute)")
            #expect(recorder.ticksPerQuarterNote == item.division)
            recorder.record(.noteOn(channel: 0, note: 60, velocity: 100), at: 1_000_000_000)
            recorder.record(.noteOff(channel: 0, note: 60, velocity: 0), at: 2_000_000_000)
            let file = try MIDIFile.read(bytes: recorder.midiFile().serialized()).file
            #expect(file.division == .ticksPerQuarterNote(item.division))
            #expect(file.tempoMap.microsecondsPerQuarterNote(atTick: 0) == item.tempo, "\(item.beatsPerMinute)")
            #expect(channelTicks(file) == [recorder.tick(at: 1_000_000_000), recorder.tick(at: 2_000_000_000)])
        }
    }

    @Test("arrivals far from the start, and mapped times that are NaN or infinite, do not trap")
    func extremeTimes() throws {
        let recorder = MIDIRecorder(start: 0, beatsPerMinute: .infinity, ticksPerQuarterNote: .max)
        #expect(recorder.tick(at: UInt64(Int64.max)) == 1 << 62)
        #expect(recorder.tick(at: UInt64.max) == 0, "before the start")
        recorder.record(.noteOn(channel: 0, note: 60, velocity: 100), at: 1)
        recorder.record(.noteOff(channel: 0, note: 60, velocity: 0), at: 2)
        let file = recorder.midiFile { $0 == 1 ? .infinity : .nan }
        #expect(channelTicks(file) == [1 << 62, 1 << 62])
    }
}

/// The ticks of the first track's channel messages.
private func channelTicks(_ file: MIDIFile) -> [Int] {
    file.tracks[0].events.filter { if case .channel = $0.payload { true } else { false } }.map(\.tick)
}
