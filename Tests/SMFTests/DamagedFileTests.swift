import MIDICore
import Testing

@testable import SMF

/// Each case damages a C-major-scale file in one way; the lenient reader must still return the
/// eight notes (or as many as the damage left) and name the defect.
@Suite("Damaged files are recovered, not refused")
struct DamagedFileTests {
    func check(
        _ bytes: [UInt8], notes: Int, expect kind: MIDIFileDiagnostic.Kind,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try MIDIFile.read(bytes: bytes)
        #expect(result.file.noteCount == notes, sourceLocation: sourceLocation)
        #expect(kinds(result).contains(kind), "got \(kinds(result))", sourceLocation: sourceLocation)
        // Strict mode turns the first diagnostic into a typed error.
        #expect(throws: MIDIFileError.self, sourceLocation: sourceLocation) {
            try MIDIFile.read(bytes: bytes, strict: true)
        }
        expectSummaryReadMatches(bytes, sourceLocation: sourceLocation)
        expectSummaryReadMatches(bytes, strict: true, sourceLocation: sourceLocation)
        // Whatever was recovered writes and reads back unchanged.
        #expect(try MIDIFile.read(bytes: result.file.serialized()).file == result.file, sourceLocation: sourceLocation)
    }

    @Test("track length too long (past end of file)")
    func lengthPastEnd() throws {
        try check(smf(tracks: [scaleTrack], lengths: [scaleTrack.count + 100]), notes: 8, expect: .trackLengthTooLong)
    }

    @Test("track length too long (swallows the next track)")
    func lengthIntoNextTrack() throws {
        let bytes = smf(tracks: [scaleTrack, scaleTrack], lengths: [scaleTrack.count + 8])
        try check(bytes, notes: 16, expect: .trackLengthTooLong)
        #expect(try MIDIFile.read(bytes: bytes).file.tracks.count == 2)
    }

    @Test("track length too short")
    func lengthTooShort() throws {
        try check(smf(tracks: [scaleTrack], lengths: [20]), notes: 8, expect: .trackLengthTooShort)
    }

    @Test("missing bytes at the end (truncated End of Track)")
    func missingLastByte() throws {
        try check(Array(smf(tracks: [scaleTrack]).dropLast()), notes: 8, expect: .truncatedEvent)
        #expect(
            kinds(try MIDIFile.read(bytes: Array(smf(tracks: [scaleTrack]).dropLast()))).contains(.missingEndOfTrack))
    }

    @Test("extra bytes at the end")
    func extraByte() throws {
        try check(smf(tracks: [scaleTrack]) + [0x00], notes: 8, expect: .extraBytesAtEnd)
    }

    @Test("missing End of Track")
    func missingEndOfTrack() throws {
        try check(smf(tracks: [Array(scaleTrack.dropLast(4))]), notes: 8, expect: .missingEndOfTrack)
    }

    @Test("data after End of Track inside the chunk")
    func dataAfterEnd() throws {
        try check(smf(tracks: [scaleTrack + [0x00, 0x90, 0x3C, 0x7F]]), notes: 8, expect: .dataAfterEndOfTrack)
    }

    @Test("alien chunks before, between and after tracks")
    func alienChunks() throws {
        let junk: [UInt8] = Array("Junk".utf8) + [0, 0, 0, 3, 1, 2, 3]
        var bytes = smf(tracks: [])
        bytes[11] = 2
        bytes +=
            junk + Array(smf(tracks: [scaleTrack]).dropFirst(14)) + junk
            + Array(smf(tracks: [scaleTrack]).dropFirst(14)) + junk
        try check(bytes, notes: 16, expect: .alienChunk)
        #expect(try MIDIFile.read(bytes: bytes).diagnostics.filter { $0.kind == .alienChunk }.count == 3)
    }

    @Test("header track count that disagrees with the file")
    func trackCount() throws {
        try check(smf(trackCount: 0, tracks: [scaleTrack]), notes: 8, expect: .trackCountMismatch)
        try check(smf(trackCount: 3, tracks: [scaleTrack]), notes: 8, expect: .trackCountMismatch)
    }

    @Test("running status interrupted by a meta event or a SysEx")
    func runningStatusAfterMeta() throws {
        var track: [UInt8] = [0x00, 0x90, 60, 0x7F, 0x60, 60, 0x00]
        track += [0x00, 0xFF, 0x01, 0x01, 0x41]
        track += [0x00, 62, 0x7F, 0x60, 62, 0x00]
        track += [0x00, 0xF0, 0x02, 0x7E, 0xF7]
        track += [0x00, 64, 0x7F, 0x60, 64, 0x00] + endOfTrack
        try check(smf(tracks: [track]), notes: 3, expect: .runningStatusAfterMetaOrSysEx)
    }

    @Test("data bytes with no running status")
    func dataWithoutStatus() throws {
        try check(smf(tracks: [[0x00, 0x3C, 0x7F] + scaleTrack]), notes: 8, expect: .dataWithoutRunningStatus)
    }

    @Test("undefined status bytes F4, F5, F9, FD and illegal system messages inside a track")
    func illegalStatus() throws {
        for status: UInt8 in [0xF4, 0xF5, 0xF9, 0xFD] {
            try check(smf(tracks: [[0x00, status] + scaleTrack]), notes: 8, expect: .undefinedStatus)
        }
        for prefix: [UInt8] in [
            [0xF1, 0x7F], [0xF2, 0x7F, 0x7F], [0xF3, 0x7F], [0xF6], [0xF8], [0xFA], [0xFB], [0xFC], [0xFE],
        ] {
            try check(smf(tracks: [[0x00] + prefix + scaleTrack]), notes: 8, expect: .illegalSystemMessage)
        }
    }

    @Test("truncation inside an event and inside a variable-length quantity")
    func truncation() throws {
        let full = smf(tracks: [scaleTrack])
        // Cut inside the last note's data bytes, then inside a delta time.
        try check(Array(full.prefix(14 + 8 + 4 + 6 * 7 + 2)), notes: 8, expect: .truncatedEvent)
        try check(smf(tracks: [Array(scaleTrack.dropLast(4)) + [0x81]]), notes: 8, expect: .truncatedEvent)
        try check(smf(tracks: [[0x00, 0xFF, 0x01, 0x10, 0x41]]), notes: 0, expect: .truncatedEvent)
    }

    @Test("huge delta times are kept without overflow")
    func hugeDelta() throws {
        let bytes = smf(tracks: [[0x00, 0x90, 60, 100, 0xFF, 0xFF, 0xFF, 0x7F, 0x80, 60, 0] + endOfTrack])
        let result = try MIDIFile.read(bytes: bytes)
        #expect(kinds(result).contains(.hugeDeltaTime))
        #expect(result.file.tracks[0].notes()[0].endTick == 0x0FFF_FFFF)
        #expect(result.file.durationSeconds > 1_000_000)
    }

    @Test("data bytes above 127 are clamped; bad meta lengths and values are reported")
    func badValues() throws {
        try check(
            smf(tracks: [[0x00, 0x90, 60, 0xC0, 0x60, 0x80, 60, 0] + endOfTrack]), notes: 1, expect: .invalidDataByte)
        let timeSignature = smf(tracks: [[0x00, 0xFF, 0x58, 0x02, 0x03, 0x02] + scaleTrack])
        try check(timeSignature, notes: 8, expect: .invalidMetaEventLength)
        let first = try MIDIFile.read(bytes: timeSignature).file.tracks[0].events[0].payload
        #expect(
            first
                == .meta(
                    .timeSignature(numerator: 3, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8)))
        try check(
            smf(tracks: [[0x00, 0xFF, 0x59, 0x02, 0x0C, 0x00] + scaleTrack]), notes: 8, expect: .invalidMetaEventValue)
    }

    @Test("format 0 with two tracks, unknown format words and bad header lengths")
    func headerDefects() throws {
        try check(
            smf(format: 0, tracks: [scaleTrack, scaleTrack]), notes: 16, expect: .singleTrackFormatWithSeveralTracks)
        try check(smf(format: 0x74, tracks: [scaleTrack]), notes: 8, expect: .unknownFormat)
        var longHeader = smf(tracks: [scaleTrack])
        longHeader[7] = 8
        longHeader.insert(contentsOf: [0, 0], at: 14)
        try check(longHeader, notes: 8, expect: .invalidHeaderLength)
        var garbageLength = smf(tracks: [scaleTrack])
        garbageLength[4] = 0x7F
        try check(garbageLength, notes: 8, expect: .invalidHeaderLength)
    }

    @Test("a MacBinary-style prefix before MThd is skipped")
    func prefix() throws {
        try check([UInt8](repeating: 0, count: 128) + smf(tracks: [scaleTrack]), notes: 8, expect: .dataBeforeHeader)
    }

    @Test("strict mode throws the first defect as a typed error")
    func strictMode() {
        do {
            _ = try MIDIFile.read(bytes: smf(tracks: [scaleTrack]) + [0], strict: true)
            Issue.record("strict mode accepted a damaged file")
        } catch {
            guard case .damaged(let diagnostic) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(diagnostic.kind == .extraBytesAtEnd)
            #expect(diagnostic.offset == smf(tracks: [scaleTrack]).count)
        }
    }
}
