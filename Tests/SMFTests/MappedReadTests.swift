import CMappedFile
import Foundation
import Synchronization
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
    /// A sound file of 16 tracks in `folder`, above the size where mapping is used.
    static func largeFile(in folder: String) throws -> String {
        let bytes = smf(tracks: ParallelReadTests.tracks)
        #expect(bytes.count >= MIDIFile.mappingMinimumBytes)
        let path = folder + "/large.mid"
        let file = try #require(fopen(path, "wb"))
        #expect(bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == bytes.count)
        fclose(file)
        return path
    }

    @Test("a large file read by path gives what reading its bytes gives, file and summary")
    func sameAsBytes() throws {
        try withTemporaryFolder("mapped") { folder in
            let path = try Self.largeFile(in: folder)
            let bytes = try MIDIFile.readBytes(path: path)
            #expect(try MIDIFile.read(path: path, threads: 2).file == MIDIFile.read(bytes: bytes).file)
            #expect(try MIDIFileSummary.read(path: path).summary == MIDIFileSummary.read(bytes: bytes).summary)
        }
    }

    @Test("a mapped file truncated under the reader reads as zeros past its new end, and is marked")
    func truncatedUnderTheMapping() throws {
        try withTemporaryFolder("mapped") { folder in
            let path = try Self.largeFile(in: folder)
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
    }

    @Test("an error thrown over the zeros of a truncated mapping is not the answer: the file is read again")
    func errorAfterTruncationIsRetried() throws {
        try withTemporaryFolder("mapped") { folder in
            let path = try Self.largeFile(in: folder)
            var calls = 0
            let seen = try MIDIFile.withBytes(path: path) { (bytes) throws(MIDIFileError) -> Int in
                calls += 1
                if calls == 1 {
                    truncate(path, 50_000)
                    if bytes[bytes.count - 1] == 0 { throw .notMIDI(what: "zeros where the file was") }
                }
                return bytes.count
            }
            #expect(calls == 2 && seen == 50_000)
        }
    }

    @Test("a named pipe is read from the descriptor opened once (a second open would wait for a writer)")
    func namedPipe() throws {
        try withTemporaryFolder("fifo") { folder in
            let path = folder + "/song.mid"
            #expect(mkfifo(path, 0o600) == 0)
            let bytes = smf(tracks: [scaleTrack])
            // The writer opens, writes everything and closes; then only the reader's own
            // descriptor can still read it.
            let writer = Thread {
                let descriptor = open(path, O_WRONLY)
                _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
            }
            writer.start()
            // Read on a thread of its own, so that a reader waiting for a second writer fails the
            // test instead of hanging it: after 20 s a writer that closes at once ends the wait.
            let outcome = Mutex<Result<MIDIFile.ReadResult, MIDIFileError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let read: Result<MIDIFile.ReadResult, MIDIFileError>
                do throws(MIDIFileError) { read = .success(try MIDIFile.read(path: path)) } catch {
                    read = .failure(error)
                }
                outcome.withLock { $0 = read }
                done.signal()
            }.start()
            if done.wait(timeout: .now() + 20) == .timedOut {
                Issue.record("reading the named pipe waited for another writer")
                close(open(path, O_WRONLY))
                done.wait()
            }
            let result = try #require(try outcome.withLock { $0 }?.get())
            #expect(result.file.noteCount == 8 && result.diagnostics.isEmpty)
        }
    }

    @Test("a file truncated while it is being read is read again as it is afterwards")
    func readAgainAfterTruncation() throws {
        try withTemporaryFolder("mapped") { folder in
            let path = try Self.largeFile(in: folder)
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
}
