import Foundation
import Synchronization
import Testing

@testable import SMF

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe whose writer thread sends `head` and then zeros until the reader closes its end;
/// returns the read end and a counter of the bytes the writer got into the pipe.
private func endlessPipe(head: [UInt8]) -> (descriptor: Int32, written: Arc) {
    var ends: [Int32] = [0, 0]
    pipe(&ends)
    signal(SIGPIPE, SIG_IGN)
    let written = Arc()
    let writer = ends[1]
    Thread {
        var sent = head.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        let zeros = [UInt8](repeating: 0, count: 4096)
        while sent >= 0 {
            written.count.add(sent, ordering: .relaxed)
            sent = zeros.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        }
        close(writer)
        written.done.store(true, ordering: .releasing)
    }.start()
    return (ends[0], written)
}

private final class Arc: Sendable {
    let count = Atomic<Int>(0)
    let done = Atomic<Bool>(false)
}

private let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96]

@Suite("Bounded reading: a file that is not MIDI costs its first bytes; a MIDI file is capped")
struct BoundedReadTests {
    @Test("an endless stream of zeros is refused after its first kilobyte, not read to the end")
    func endlessZeros() throws {
        let (descriptor, written) = endlessPipe(head: [])
        #expect(throws: MIDIFileError.notMIDI(what: "no MThd header in the first bytes")) {
            try MIDIFile.readBytes(from: descriptor, path: "zeros", isCancelled: nil)
        }
        close(descriptor)
        while !written.done.load(ordering: .acquiring) { usleep(1_000) }
        // What the writer got in: the prefix read, and what the pipe's buffer holds (64 KB).
        #expect(written.count.load(ordering: .relaxed) < 1 << 20)
    }

    @Test("a stream that starts as MIDI and goes on is refused at the limit, with the limit named")
    func endlessMIDI() throws {
        let (descriptor, written) = endlessPipe(head: header)
        #expect(throws: MIDIFileError.tooLarge(path: "song", bytes: nil, limit: 100_000)) {
            try MIDIFile.readBytes(from: descriptor, path: "song", isCancelled: nil, limit: 100_000)
        }
        close(descriptor)
        while !written.done.load(ordering: .acquiring) { usleep(1_000) }
        #expect(written.count.load(ordering: .relaxed) < 100_000 + (1 << 20))
        let text = MIDIFileError.tooLarge(path: "song.mid", bytes: 300_000_001, limit: 256_000_000).description
        #expect(text == "cannot read song.mid: 301 MB, over the limit of 256 MB for a MIDI file (MIDIFile.sizeLimit)")
    }

    @Test("a regular file over the limit is refused from its size, before it is read or mapped")
    func largeRegularFile() throws {
        let path = NSTemporaryDirectory() + "pianola-bounded-\(getpid()).mid"
        defer { unlink(path) }
        try Data(header + [UInt8](repeating: 0, count: 3 << 20)).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        #expect(throws: MIDIFileError.tooLarge(path: path, bytes: (3 << 20) + 14, limit: 1 << 20)) {
            try MIDIFile.readBytes(from: descriptor, path: path, isCancelled: nil, limit: 1 << 20)
        }
        // Under the default limit it reads, and a file of zeros that large is refused from its start.
        #expect(try MIDIFile.readBytes(path: path).count == (3 << 20) + 14)
        try Data([UInt8](repeating: 0, count: 3 << 20)).write(to: URL(fileURLWithPath: path))
        #expect(throws: MIDIFileError.notMIDI(what: "no MThd header in the first bytes")) {
            try MIDIFile.read(path: path)
        }
    }

    @Test("a named pipe nobody writes to: the wait ends when the caller cancels it")
    func cancelledWait() throws {
        let path = NSTemporaryDirectory() + "pianola-fifo-\(getpid())"
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let asked = Atomic<Int>(0)
        #expect(throws: MIDIFileError.interrupted(path: path)) {
            try MIDIFile.read(path: path, isCancelled: { asked.add(1, ordering: .relaxed).newValue > 3 })
        }
        #expect(throws: MIDIFileError.interrupted(path: path)) {
            try MIDIFile.readBytes(path: path, isCancelled: { true })
        }
        // A writer that comes: its song is read.
        Thread {
            let writer = open(path, O_WRONLY)
            let song = header + Array("MTrk".utf8) + [0, 0, 0, 4, 0, 0xFF, 0x2F, 0]
            _ = song.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }.start()
        #expect(try MIDIFile.read(path: path, isCancelled: { false }).file.tracks.count == 1)
    }
}
