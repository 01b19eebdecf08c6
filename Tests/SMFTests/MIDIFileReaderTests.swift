import MIDICore
import Testing

@testable import SMF

@Suite("SMF reading: structure, meta events, variable-length quantities")
struct MIDIFileReaderTests {
    @Test("a clean format-1 file reads with no diagnostics")
    func cleanFile() throws {
        let result = try MIDIFile.read(bytes: smf(tracks: [scaleTrack]))
        #expect(result.diagnostics.isEmpty)
        #expect(result.file.format == .multiTrack)
        #expect(result.file.division == .ticksPerQuarterNote(96))
        #expect(result.file.noteCount == 8)
        #expect(result.file.tracks[0].notes().count == 8)
        #expect(result.file.tracks[0].events.last == MIDIFile.Event(tick: 8 * 96, .meta(.endOfTrack)))
    }

    @Test("every meta event kind is decoded")
    func everyMetaEvent() throws {
        var track: [UInt8] = [0x00, 0xFF, 0x00, 0x02, 0x12, 0x34, 0x00, 0xFF, 0x00, 0x00]
        for kind in MIDIFile.TextKind.allCases { track += [0x00, 0xFF, kind.rawValue, 0x02, 0x41, 0x42] }
        track += [0x00, 0xFF, 0x20, 0x01, 0x09, 0x00, 0xFF, 0x21, 0x01, 0x02]
        track += [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20]
        track += [0x00, 0xFF, 0x54, 0x05, 0x61, 0x02, 0x03, 0x04, 0x05]
        track += [0x00, 0xFF, 0x58, 0x04, 0x06, 0x03, 0x24, 0x08]
        track += [0x00, 0xFF, 0x59, 0x02, 0xFD, 0x01]
        track += [0x00, 0xFF, 0x7F, 0x03, 0x00, 0x00, 0x41]
        track += [0x00, 0xFF, 0x60, 0x01, 0x07]
        track += endOfTrack
        let result = try MIDIFile.read(bytes: smf(tracks: [track]))
        #expect(result.diagnostics.isEmpty)
        let metas = result.file.tracks[0].events.compactMap { event -> MIDIFile.MetaEvent? in
            if case .meta(let meta) = event.payload { return meta }
            return nil
        }
        var expected: [MIDIFile.MetaEvent] = [.sequenceNumber(0x1234), .sequenceNumber(nil)]
        expected += MIDIFile.TextKind.allCases.map { .text($0, [0x41, 0x42]) }
        expected += [
            .channelPrefix(9), .port(2), .tempo(microsecondsPerQuarterNote: 500_000),
            .smpteOffset(hours: 0x61, minutes: 2, seconds: 3, frames: 4, subframes: 5),
            .timeSignature(numerator: 6, denominatorPower: 3, clocksPerClick: 36, thirtySecondsPerQuarter: 8),
            .keySignature(sharps: -3, minor: true), .sequencerSpecific([0, 0, 0x41]), .unknown(type: 0x60, data: [7]),
            .endOfTrack,
        ]
        #expect(metas == expected)
        // And they are written back byte for byte.
        #expect(try result.file.serialized() == smf(tracks: [track]))
    }

    @Test("SysEx F0 packets and F7 continuation/escape packets are kept as written")
    func sysExPackets() throws {
        let track: [UInt8] =
            [0x00, 0xF0, 0x03, 0x43, 0x12, 0x00, 0x10, 0xF7, 0x02, 0x07, 0xF7, 0x00, 0xF7, 0x01, 0xF8] + endOfTrack
        let result = try MIDIFile.read(bytes: smf(tracks: [track]))
        #expect(result.diagnostics.isEmpty)
        #expect(
            result.file.tracks[0].events.map(\.payload).prefix(3) == [
                .sysEx([0x43, 0x12, 0x00]), .escape([0x07, 0xF7]), .escape([0xF8]),
            ])
        #expect(result.file.tracks[0].events[1].tick == 0x10)
    }

    @Test("variable-length quantities: boundaries, non-minimal encodings, more than four bytes")
    func variableLengthQuantities() throws {
        for (bytes, value) in [
            ([0x00], 0), ([0x7F], 127), ([0x81, 0x00], 128), ([0xFF, 0x7F], 16_383), ([0x81, 0x80, 0x00], 16_384),
            ([0xFF, 0xFF, 0xFF, 0x7F], 0x0FFF_FFFF),
        ] as [([UInt8], Int)] {
            let result = try MIDIFile.read(bytes: smf(tracks: [bytes + [0xFF, 0x2F, 0x00]]))
            #expect(result.file.tracks[0].events[0].tick == value)
            var encoded: [UInt8] = []
            appendVariableLength(value, to: &encoded)
            #expect(encoded == bytes)
        }
        // Non-minimal (padded with 0x80) is valid SMF: no diagnostic.
        let padded = try MIDIFile.read(bytes: smf(tracks: [[0x80, 0x80, 0x60, 0xFF, 0x2F, 0x00]]))
        #expect(padded.diagnostics.isEmpty)
        #expect(padded.file.tracks[0].events[0].tick == 0x60)
        let long = try MIDIFile.read(bytes: smf(tracks: [[0x80, 0x80, 0x80, 0x80, 0x01, 0xFF, 0x2F, 0x00]]))
        #expect(kinds(long).contains(.invalidVariableLengthQuantity))
        #expect(long.file.tracks[0].events[0].tick == 1)
    }

    @Test("PPQN and SMPTE divisions")
    func divisions() throws {
        #expect(
            try MIDIFile.read(bytes: smf(division: 0xE728, tracks: [endOfTrack])).file.division
                == .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        #expect(
            try MIDIFile.read(bytes: smf(division: 0xE350, tracks: [endOfTrack])).file.division
                == .smpte(framesPerSecond: 29, ticksPerFrame: 80))
        #expect(MIDIFile.Division.smpte(framesPerSecond: 25, ticksPerFrame: 40).rawValue == 0xE728)
        #expect(
            try MIDIFile.read(bytes: smf(division: 960, tracks: [endOfTrack])).file.division
                == .ticksPerQuarterNote(960))
    }

    @Test("formats 0, 1 and 2 and RIFF RMID wrappers")
    func formatsAndRMID() throws {
        #expect(try MIDIFile.read(bytes: smf(format: 0, tracks: [scaleTrack])).file.format == .singleTrack)
        #expect(
            try MIDIFile.read(bytes: smf(format: 2, tracks: [scaleTrack, scaleTrack])).file.format == .multiSequence)
        let inner = smf(tracks: [scaleTrack])
        var riff: [UInt8] = Array("RIFF".utf8) + le32(4 + 8 + inner.count) + Array("RMID".utf8)
        riff += Array("data".utf8) + le32(inner.count) + inner
        let result = try MIDIFile.read(bytes: riff)
        #expect(result.isRMID)
        #expect(result.diagnostics.isEmpty)
        #expect(result.file.noteCount == 8)
    }

    @Test("files with no MIDI at all are rejected with an error that says what they are")
    func rejections() {
        let cases: [([UInt8], String)] = [
            ([], "empty"), (Array("not a midi file".utf8), "text"), ([0x50, 0x4B, 3, 4, 0, 0, 0, 0], "ZIP"),
            (Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8), "WAVE"),
            (Array("<html><body>404</body></html>".utf8), "HTML"),
            (Array("ID3\u{3}\u{0}".utf8), "MP3"),
        ]
        for (bytes, word) in cases {
            do {
                _ = try MIDIFile.read(bytes: bytes)
                Issue.record("accepted \(word)")
            } catch {
                #expect(error.description.contains(word), "\(error)")
            }
        }
    }
}

func le32(_ value: Int) -> [UInt8] {
    [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)]
}
