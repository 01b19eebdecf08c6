import CMappedFile
import TestSupport
import Testing

@testable import SMF

#if canImport(Glibc)
    import Glibc
#endif

/// Large files are read through a mapping of the page cache; a file truncated while mapped must
/// read as zeros (no SIGBUS) and then be read again as it is.
@Suite("Reading large files through a mapping")
struct MappedReadTests {
    /// A sound file of 16 tracks, above the size where mapping is used.
    static func largeFile() throws -> String {
        let bytes = smf(tracks: ParallelReadTests.tracks)
        #expect(bytes.count >= MIDIFile.mappingMinimumBytes)
        let path = makeTemporaryDirectory("pianola-mapped") + "/large.mid"
        let file = try #require(fopen(path, "wb"))
        #expect(bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == bytes.count)
        fclose(file)
        return path
    }

    @Test("a large file read by path gives what reading its bytes gives, file and summary")
    func sameAsBytes() throws {
        let path = try Self.largeFile()
        let bytes = try MIDIFile.readBytes(path: path)
        #expect(try MIDIFile.read(path: path, threads: 2).file == MIDIFile.read(bytes: bytes).file)
        #expect(try MIDIFileSummary.read(path: path).summary == MIDIFileSummary.read(bytes: bytes).summary)
    }

    @Test("a mapped file truncated under the reader reads as zeros past its new end, and is marked")
    func truncatedUnderTheMapping() throws {
        let path = try Self.largeFile()
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        let length = Int(lseek(descriptor, 0, SEEK_END))
        var slot: Int32 = 0
        let address = try #require(pianola_map_file(descriptor, length, &slot))
        defer { pianola_unmap_file(address, length, slot) }
        let bytes = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: length)
        #expect(Array(bytes.prefix(4)) == Array("MThd".utf8))
        #expect(pianola_mapped_file_damaged(slot) == 0)
        #expect(ftruncate(descriptor, 4096) == 0)
        // Without the handler, this read would end the process with SIGBUS.
        #expect(bytes[length - 100] == 0 && bytes[length / 2] == 0)
        #expect(pianola_mapped_file_damaged(slot) == 1)
        #expect(Array(bytes.prefix(4)) == Array("MThd".utf8))
    }

    @Test("a file truncated while it is being read is read again as it is afterwards")
    func readAgainAfterTruncation() throws {
        let path = try Self.largeFile()
        var calls = 0
        let seen = try MIDIFile.withBytes(path: path) { (bytes) throws(MIDIFileError) -> Int in
            calls += 1
            if calls == 1 { truncate(path, 100_000) }
            // Touch every page, as a reader does.
            var sum = 0
            for offset in stride(from: 0, to: bytes.count, by: 4096) { sum &+= Int(bytes[offset]) }
            _ = sum
            return bytes.count
        }
        #expect(calls == 2 && seen == 100_000)
        // And the readers report the damage of the truncated file, not zeros.
        let result = try MIDIFile.read(path: path)
        #expect(result.diagnostics.contains { $0.kind == .trackLengthTooLong || $0.kind == .truncatedEvent })
    }
}
