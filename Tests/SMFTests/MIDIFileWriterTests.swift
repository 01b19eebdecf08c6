import Foundation
import MIDICore
import TestSupport
import Testing

@testable import SMF

#if canImport(Glibc)
    import Glibc
#endif

@Suite("SMF writing and round trips")
struct MIDIFileWriterTests {
    @Test("a canonical file round-trips byte for byte, with and without running status")
    func canonicalBytes() throws {
        let canonical = smf(tracks: [
            [0x00, 0xFF, 0x03, 0x01, 0x41, 0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + scaleTrack
        ])
        let file = try MIDIFile.read(bytes: canonical).file
        #expect(try file.serialized(runningStatus: true) == canonical)
        let plain = try file.serialized(runningStatus: false)
        #expect(plain.count == canonical.count + 15)
        #expect(try MIDIFile.read(bytes: plain).file == file)
    }

    @Test("random files: write → read gives the same events (formats 0/1/2, PPQN and SMPTE)")
    func randomRoundTrips() throws {
        var generator = SplitMix(seed: 7)
        for iteration in 0..<300 {
            let file = randomFile(&generator)
            for runningStatus in [true, false] {
                let result = try MIDIFile.read(bytes: file.serialized(runningStatus: runningStatus))
                #expect(result.diagnostics.isEmpty, "iteration \(iteration): \(result.diagnostics)")
                #expect(result.file == file, "iteration \(iteration)")
            }
        }
    }

    @Test("notes() of messages built with a channel above 15 or a key above 127: left out, not a trap")
    func notesOutOfRangeInCode() throws {
        let track = MIDIFile.Track(events: [
            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 17, note: 200, velocity: 90))),
            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 255, note: 255, velocity: 80))),
            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 1, note: 72, velocity: 90))),
            MIDIFile.Event(tick: 240, .channel(.noteOff(channel: 17, note: 72, velocity: 30))),
            MIDIFile.Event(tick: 240, .channel(.noteOff(channel: 1, note: 72, velocity: 30))),
            MIDIFile.Event(tick: 480, .channel(.noteOn(channel: 0xF0, note: 0x80, velocity: 70))),
            MIDIFile.Event(tick: 960, .meta(.endOfTrack)),
        ])
        #expect(
            track.notes() == [
                Note(
                    channel: 1, key: 72, velocity: 90, releaseVelocity: 30, startTick: 0, endTick: 240,
                    isUnterminated: false)
            ])
    }

    @Test("writing a message MIDI cannot carry throws, naming track, event and field; nothing is written")
    func outOfRangeRefusedOnWrite() throws {
        // Issue 43: this note-on was written as 94 7A 48 and read back as another note.
        let song = MIDIFile.Track(events: [
            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: 60, velocity: 100))),
            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 3, note: 250, velocity: 200))),
            MIDIFile.Event(tick: 480, .meta(.endOfTrack)),
        ])
        let file = MIDIFile(tracks: [MIDIFile.Track(events: [MIDIFile.Event(tick: 0, .meta(.endOfTrack))]), song])
        let expected = MIDIFileError.valueOutOfRange(
            track: 1, event: 1, MIDIValueError(field: "note", value: 250, range: 0...127))
        for runningStatus in [true, false] {
            #expect(throws: expected) { try file.serialized(runningStatus: runningStatus) }
        }
        #expect(
            expected.description == "cannot write the MIDI file: track 1, event 1: note 250 is out of range (0-127)")
        try withTemporaryFolder("midi-out-of-range") { (folder: String) throws in
            #expect(throws: expected) { try file.write(to: folder + "/song.mid") }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
        // In range, the same file writes and reads back equal.
        var fixed = file
        fixed.tracks[1].events[1] = MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 3, note: 100, velocity: 120)))
        #expect(try MIDIFile.read(bytes: fixed.serialized()).file == fixed)
    }

    @Test("writing to a path goes through a temporary name and leaves nothing else behind")
    func writeToPath() throws {
        let file = try MIDIFile.read(bytes: smf(tracks: [scaleTrack])).file
        try withTemporaryFolder("midi-file-writer") { folder in
            let path = folder + "/written.mid"
            try file.write(to: path)
            #expect(try MIDIFile.read(path: path).file == file)
            unlink(path)
            #expect(throws: MIDIFileError.self) { try file.write(to: "/nonexistent-dir/x.mid") }
        }
    }
}

func randomFile(_ g: inout SplitMix) -> MIDIFile {
    let format = [MIDIFile.Format.singleTrack, .multiTrack, .multiSequence].randomElement(using: &g)!
    let trackCount = format == .singleTrack ? 1 : Int.random(in: 1...4, using: &g)
    let division: MIDIFile.Division =
        Bool.random(using: &g)
        ? .ticksPerQuarterNote(Int.random(in: 1...0x7FFF, using: &g))
        : .smpte(
            framesPerSecond: [24, 25, 29, 30].randomElement(using: &g)!,
            ticksPerFrame: Int.random(in: 1...255, using: &g))
    var tracks: [MIDIFile.Track] = []
    for _ in 0..<trackCount {
        var tick = 0
        var events: [MIDIFile.Event] = []
        for _ in 0..<Int.random(in: 0...60, using: &g) {
            tick +=
                Bool.random(using: &g)
                ? 0 : Int.random(in: 0...(1 << Int.random(in: 0...27, using: &g)), using: &g) & 0x7F_FFFF
            events.append(MIDIFile.Event(tick: tick, randomPayload(&g)))
        }
        events.append(MIDIFile.Event(tick: tick + Int.random(in: 0...100, using: &g), .meta(.endOfTrack)))
        tracks.append(MIDIFile.Track(events: events))
    }
    return MIDIFile(format: format, division: division, tracks: tracks)
}

func randomBytes(_ g: inout SplitMix, _ range: ClosedRange<Int>, max value: UInt8 = 255) -> [UInt8] {
    (0..<Int.random(in: range, using: &g)).map { _ in UInt8.random(in: 0...value, using: &g) }
}

func randomPayload(_ g: inout SplitMix) -> MIDIFile.Payload {
    let channel = UInt8.random(in: 0...15, using: &g)
    let a = UInt8.random(in: 0...127, using: &g)
    let b = UInt8.random(in: 0...127, using: &g)
    switch Int.random(in: 0..<20, using: &g) {
    case 0: return .channel(.noteOff(channel: channel, note: a, velocity: b))
    case 1, 2, 3: return .channel(.noteOn(channel: channel, note: a, velocity: b))
    case 4: return .channel(.polyphonicKeyPressure(channel: channel, note: a, pressure: b))
    case 5: return .channel(.controlChange(channel: channel, controller: a, value: b))
    case 6: return .channel(.programChange(channel: channel, program: a))
    case 7: return .channel(.channelPressure(channel: channel, pressure: a))
    case 8: return .channel(.pitchBend(channel: channel, value: UInt16.random(in: 0...16383, using: &g)))
    case 9: return .sysEx(randomBytes(&g, 0...300, max: 127) + [0xF7])
    case 10: return .escape(randomBytes(&g, 0...10))
    case 11: return .meta(.text(MIDIFile.TextKind.allCases.randomElement(using: &g)!, randomBytes(&g, 0...200)))
    case 12: return .meta(.tempo(microsecondsPerQuarterNote: Int.random(in: 1...0xFF_FFFF, using: &g)))
    case 13:
        return .meta(
            .timeSignature(
                numerator: UInt8.random(in: 1...32, using: &g), denominatorPower: UInt8.random(in: 0...6, using: &g),
                clocksPerClick: a, thirtySecondsPerQuarter: b))
    case 14: return .meta(.keySignature(sharps: Int8.random(in: -7...7, using: &g), minor: Bool.random(using: &g)))
    case 15:
        return .meta(
            .smpteOffset(
                hours: UInt8.random(in: 0...23, using: &g), minutes: a % 60, seconds: b % 60, frames: a % 30,
                subframes: b % 100))
    case 16: return .meta(.sequencerSpecific(randomBytes(&g, 0...20)))
    case 17: return .meta(Bool.random(using: &g) ? .channelPrefix(channel) : .port(a))
    case 18: return .meta(.sequenceNumber(Bool.random(using: &g) ? nil : UInt16.random(in: 0...UInt16.max, using: &g)))
    default:
        return .meta(
            .unknown(type: [0x0A, 0x0F, 0x4B, 0x60, 0x7E].randomElement(using: &g)!, data: randomBytes(&g, 0...30)))
    }
}
