import MIDICore
import Testing

@testable import SMF

@Suite("Tempo map and note pairing")
struct TempoMapTests {
    @Test("default 120 BPM, tempo changes in a track other than the first")
    func tempoChangesInAnyTrack() throws {
        // Track 0: nothing but End of Track at tick 960; track 1: tempo 60 BPM at tick 480.
        let track1: [UInt8] = [0x83, 0x60, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40] + endOfTrack
        let file = try MIDIFile.read(bytes: smf(division: 480, tracks: [[0x87, 0x40, 0xFF, 0x2F, 0x00], track1])).file
        let map = file.tempoMap
        #expect(map.seconds(forTick: 480) == 0.5)
        #expect(map.seconds(forTick: 960) == 1.5)
        #expect(map.tick(forSeconds: 1.5) == 960)
        #expect(map.tick(forSeconds: 0.25) == 240)
        #expect(map.microsecondsPerQuarterNote(atTick: 960) == 1_000_000)
        #expect(file.durationSeconds == 1.5)
        for tick in stride(from: 0, through: 3000, by: 37) {
            #expect(abs(map.tick(forSeconds: map.seconds(forTick: tick)) - Double(tick)) < 1e-9)
        }
    }

    @Test("SMPTE divisions ignore tempo: 25 fps × 40 ticks is 1000 ticks per second; 29 means 29.97")
    func smpteDivision() {
        let map = TempoMap(division: .smpte(framesPerSecond: 25, ticksPerFrame: 40), tempos: [(0, 1_000_000)])
        #expect(map.seconds(forTick: 1500) == 1.5)
        #expect(map.tick(forSeconds: 2) == 2000)
        let dropFrame = TempoMap(division: .smpte(framesPerSecond: 29, ticksPerFrame: 100), tempos: [])
        #expect(abs(dropFrame.seconds(forTick: 30_000) - 10.01) < 1e-9)
    }

    @Test("bars and beats follow time signature changes")
    func barsAndBeats() {
        // 4/4 for two bars, then 3/4, then 6/8; 480 ticks per quarter.
        let map = TempoMap(
            division: .ticksPerQuarterNote(480), tempos: [], meters: [(0, 4, 4), (3840, 3, 4), (3840 + 2 * 1440, 6, 8)])
        #expect(map.barBeat(forTick: 0) == (1, 1, 0))
        #expect(map.barBeat(forTick: 1920 + 480 + 10) == (2, 2, 10))
        #expect(map.barBeat(forTick: 3840) == (3, 1, 0))
        #expect(map.barBeat(forTick: 3840 + 1440 + 960) == (4, 3, 0))
        #expect(map.barBeat(forTick: 6720) == (5, 1, 0))
        #expect(map.barBeat(forTick: 6720 + 240 * 5) == (5, 6, 0))
        #expect(map.beats(forTick: 720) == 1.5)
    }

    @Test("notes pair FIFO, velocity-0 note-ons end notes, unterminated notes close at track end")
    func notePairing() throws {
        let track: [UInt8] = [
            0x00, 0x90, 60, 100,  // A starts at 0
            0x10, 0x90, 60, 90,  // B (same key) starts at 16
            0x10, 0x80, 60, 40,  // ends A (first in, first out) at 32
            0x10, 0x90, 60, 0,  // ends B at 48
            0x00, 0x91, 64, 70,  // C never ends
            0x20, 0xFF, 0x2F, 0x00,
        ]
        let notes = try MIDIFile.read(bytes: smf(tracks: [track])).file.tracks[0].notes()
        #expect(notes.count == 3)
        #expect((notes[0].startTick, notes[0].endTick, notes[0].velocity, notes[0].releaseVelocity) == (0, 32, 100, 40))
        #expect((notes[1].startTick, notes[1].endTick, notes[1].isUnterminated) == (16, 48, false))
        #expect((notes[2].channel, notes[2].endTick, notes[2].isUnterminated) == (1, 80, true))
    }
}
