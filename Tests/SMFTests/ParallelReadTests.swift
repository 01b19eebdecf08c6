import Testing

@testable import SMF

/// Reading tracks on several threads must give exactly what reading them one after another gives:
/// the same tracks, the same diagnostics in the same order, the same strict-mode error.
@Suite("Reading a large file's tracks at once")
struct ParallelReadTests {
    /// A track of `notes` scale notes on `channel` (running status), with an End of Track.
    static func track(notes: Int, channel: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [0x00, 0x90 | channel]
        for index in 0..<notes {
            let key = UInt8(48 + index % 36)
            if index > 0 { bytes.append(0x00) }
            bytes += [key, 0x64, 0x10, key, 0x00]
        }
        return bytes + endOfTrack
    }

    /// Sixteen tracks of different sizes, about 1.3 MB: above the size where threads are used.
    static let tracks: [[UInt8]] = (0..<16).map { track(notes: 12_000 + 1_500 * $0, channel: UInt8($0)) }

    static func bothWays(
        _ bytes: [UInt8], strict: Bool = false
    ) -> (
        Result<MIDIFile.ReadResult, MIDIFileError>, Result<MIDIFile.ReadResult, MIDIFileError>
    ) {
        func read(_ threads: Int) -> Result<MIDIFile.ReadResult, MIDIFileError> {
            do throws(MIDIFileError) {
                return .success(try MIDIFile.read(bytes: bytes, strict: strict, threads: threads))
            } catch {
                return .failure(error)
            }
        }
        expectSummaryReadMatches(bytes, strict: strict, threads: 2)
        return (read(1), read(2))
    }

    static func expectSame(
        _ one: Result<MIDIFile.ReadResult, MIDIFileError>, _ two: Result<MIDIFile.ReadResult, MIDIFileError>
    ) {
        switch (one, two) {
        case (.success(let a), .success(let b)):
            #expect(a.file == b.file)
            #expect(a.diagnostics == b.diagnostics)
        case (.failure(let a), .failure(let b)):
            #expect(a.description == b.description)
        default:
            Issue.record("one thread: \(one), two threads: \(two)")
        }
    }

    @Test("a sound file: the same tracks, no diagnostics")
    func soundFile() throws {
        let bytes = smf(tracks: Self.tracks)
        #expect(bytes.count > SMFReader.parallelMinimumBytes)
        let (one, two) = Self.bothWays(bytes)
        Self.expectSame(one, two)
        let result = try one.get()
        #expect(result.file.tracks.count == 16 && result.diagnostics.isEmpty)
        #expect(result.file.noteCount == (0..<16).reduce(0) { $0 + 12_000 + 1_500 * $1 })
    }

    @Test(
        "damage in the middle: a length too short, too long, a lost End of Track, bad data; lenient and strict",
        arguments: [
            ("short length", 5, -40), ("long length", 7, 40), ("no End of Track", 9, 0), ("bad data", 3, 0),
        ])
    func damaged(label: String, track: Int, lengthChange: Int) throws {
        var tracks = Self.tracks
        if label == "no End of Track" { tracks[track].removeLast(4) }
        if label == "bad data" { tracks[track][1000] = 0xF4 }
        var lengths: [Int?] = tracks.map { _ in nil }
        if lengthChange != 0 { lengths[track] = tracks[track].count + lengthChange }
        let bytes = smf(tracks: tracks, lengths: lengths)
        let (one, two) = Self.bothWays(bytes)
        Self.expectSame(one, two)
        #expect(!(try one.get().diagnostics.isEmpty), "\(label) is reported")
        let (strictOne, strictTwo) = Self.bothWays(bytes, strict: true)
        Self.expectSame(strictOne, strictTwo)
        if case .success = strictOne { Issue.record("\(label): strict reading threw nothing") }
    }
}
