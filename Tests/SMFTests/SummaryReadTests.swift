import Testing

@testable import SMF

/// `MIDIFileSummary.read` digests events as they are read; every field must come out as
/// `MIDIFileSummary(file)` computes it from the events (the corpus test covers real files).
@Suite("Summarizing a file while reading it")
struct SummaryReadTests {
    /// A meta event at delta `delta`.
    static func meta(_ delta: UInt8, _ type: UInt8, _ data: [UInt8]) -> [UInt8] {
        [delta, 0xFF, type, UInt8(data.count)] + data
    }

    /// A track with a name after tick 0, tempos, meters (one with a bad denominator), keys,
    /// markers, lyrics, karaoke text, programs on two channels (one repeated), SysEx, and notes
    /// with velocity 0.
    static let richTrack: [UInt8] =
        meta(0, 0x03, Array("Lead".utf8)) + meta(0, 0x51, [0x07, 0xA1, 0x20]) + meta(0, 0x58, [3, 2, 24, 8])
        + meta(0, 0x59, [0xFD, 0x01]) + [0x00, 0xC2, 0x05, 0x00, 0xC3, 0x30, 0x00, 0xC2, 0x05]
        + meta(0, 0x01, Array("@KMIDI KARAOKE FILE".utf8)) + meta(10, 0x01, Array("Hel".utf8))
        + meta(0, 0x05, Array("lo".utf8)) + meta(0, 0x06, Array("Verse".utf8)) + meta(0, 0x07, Array("cue".utf8))
        + meta(0, 0x03, Array("Late name".utf8)) + [0x00, 0x92, 0x40, 0x50, 0x10, 0x40, 0x00, 0x00, 0x93, 0x41, 0x00]
        + [0x00, 0xE2, 0x00, 0x40, 0x00, 0xF0, 0x03, 0x7E, 0x09, 0xF7] + meta(20, 0x51, [0x03, 0xD0, 0x90])
        + meta(0, 0x58, [7, 40, 24, 8]) + meta(0, 0x59, [0x09, 0x00]) + endOfTrack

    /// A track whose first event is past tick 0 and names it: no name.
    static let lateNameTrack: [UInt8] =
        meta(5, 0x03, Array("Not a name".utf8)) + [0x00, 0x99, 0x24, 0x64, 0x10, 0x89, 0x24, 0x40] + endOfTrack

    @Test("formats 0, 1 and 2, with every kind of event a summary looks at", arguments: [0, 1, 2])
    func everyKindOfEvent(format: Int) throws {
        let tracks = format == 0 ? [Self.richTrack] : [Self.richTrack, Self.lateNameTrack, scaleTrack]
        let summary = try #require(expectSummaryReadMatches(smf(format: format, tracks: tracks)))
        #expect(summary.tracks[0].name == "Lead")
        #expect(summary.tracks[0].programs.count == 2 && summary.lyricCount == 2 && summary.markerCount == 2)
        #expect(
            summary.tempoChanges.count == 2 && summary.timeSignatures.count == 2 && summary.keySignatures.count == 2)
        if format != 0 { #expect(summary.tracks[1].name == nil && summary.tracks[1].channels == [9]) }
    }

    @Test("more than 200 lyric lines over several tracks: the first 200, in file order")
    func lyricLinesAcrossTracks() throws {
        let lyrics = (0..<150).flatMap { Self.meta(1, 0x05, Array("w\($0) ".utf8)) }
        let summary = try #require(
            expectSummaryReadMatches(smf(tracks: [lyrics + endOfTrack, lyrics + endOfTrack, scaleTrack])))
        #expect(summary.lyricCount == 300 && summary.lyrics.count == 200 && summary.lyrics[150] == "w0 ")
    }

    @Test("a large file read on several threads, and a header cut short")
    func threadsAndTruncation() throws {
        let large = smf(tracks: ParallelReadTests.tracks + [Self.richTrack])
        #expect(expectSummaryReadMatches(large, threads: 3)?.trackCount == 17)
        expectSummaryReadMatches(Array(large.prefix(10)))
        expectSummaryReadMatches(Array(large.prefix(10)), strict: true)
        expectSummaryReadMatches([])
    }
}
