import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MIDIFile {
    /// The default of `sizeLimit`: 256 MB. A MIDI file's events take some fifteen times its size
    /// in memory once read, so this bounds what a song makes a process hold to a few gigabytes.
    public static let defaultSizeLimit = 256_000_000

    private static let limit = Atomic<Int>(defaultSizeLimit)

    /// The largest MIDI file, in bytes, that reading from a path accepts (for this process);
    /// a larger one is `MIDIFileError.tooLarge`, found before it is read. `defaultSizeLimit`
    /// unless set.
    public static var sizeLimit: Int {
        get { limit.load(ordering: .relaxed) }
        set { limit.store(max(prefixBytes, newValue), ordering: .relaxed) }
    }

    /// Reads a file from disk (see `read(bytes:strict:threads:)`).
    ///
    /// Only a file that starts as a MIDI file does (see `readBytes(path:isCancelled:)`), and no
    /// larger than `MIDIFile.sizeLimit`. `isCancelled`, asked a few times a second while a pipe
    /// or a device has nothing to read, ends the wait with `MIDIFileError.interrupted`.
    public static func read(
        path: String, strict: Bool = false, threads: Int = 1, isCancelled: (() -> Bool)? = nil
    ) throws(MIDIFileError)
        -> ReadResult
    {
        try withBytes(path: path, isCancelled: isCancelled) { (bytes) throws(MIDIFileError) in
            try read(buffer: bytes, strict: strict, threads: threads)
        }
    }

    /// Writes the file to `path` through a temporary name and a rename, so an interrupted write
    /// never leaves a half-written file under the final name.
    public func write(to path: String, runningStatus: Bool = true) throws(MIDIFileError) {
        try MIDIFile.writeBytes(serialized(runningStatus: runningStatus), to: path)
    }

    /// The raw bytes of a MIDI file (typed errors, no Foundation).
    ///
    /// Reading is bounded: the first bytes must be those of a MIDI file (`MThd` within the first
    /// kilobyte, or a RIFF RMID header), or the file is refused with what it looks like, before
    /// the rest is read; and a file larger than `MIDIFile.sizeLimit` is refused
    /// (`MIDIFileError.tooLarge`). A named pipe or a device is read as it comes; `isCancelled`,
    /// asked a few times a second while it has nothing to read, ends the wait with
    /// `MIDIFileError.interrupted`.
    public static func readBytes(path: String, isCancelled: (() -> Bool)? = nil) throws(MIDIFileError) -> [UInt8] {
        // Not blocking: opening a named pipe would otherwise wait for a writer, uninterruptibly.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        return try readBytes(from: descriptor, path: path, isCancelled: isCancelled)
    }

    /// How many bytes are read first to tell whether a file is MIDI at all: the RIFF header, or
    /// the kilobyte of leading data the reader skips to find `MThd` and the header itself, and
    /// what `FileKind` looks at to name another kind of file (a module's tag at byte 1080).
    static let prefixBytes = 1024 + 64

    /// The bytes of the open `descriptor` (at `path`, for errors), read to its end; the first
    /// ones checked before the rest is read, the whole no larger than `sizeLimit`.
    static func readBytes(
        from descriptor: Int32, path: String, isCancelled: (() -> Bool)?, limit: Int = sizeLimit
    ) throws(MIDIFileError) -> [UInt8] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .unreadable(path: path, reason: "it is a directory") }
        let isRegular = (info.st_mode & S_IFMT) == S_IFREG
        if isRegular && Int(info.st_size) > limit {
            throw .tooLarge(path: path, bytes: Int(info.st_size), limit: limit)
        }
        var bytes: [UInt8] = []
        if isRegular { bytes.reserveCapacity(Int(info.st_size) + 1) }
        var checked = false
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if !isRegular {
                // A pipe or a device: wait until it has something to say (a pipe no writer has
                // opened yet reports nothing), a tenth of a second at a time.
                if isCancelled?() == true { throw .interrupted(path: path) }
                var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&wait, 1, 100) <= 0 { continue }
            }
            // The first read stops at the prefix, so that a file that is not MIDI costs no more.
            let wanted = checked ? chunk.count : prefixBytes - bytes.count
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if count > 0 {
                bytes += chunk[0..<count]
                if bytes.count > limit { throw .tooLarge(path: path, bytes: nil, limit: limit) }
                if !checked && bytes.count >= prefixBytes {
                    try checkPrefix(bytes)
                    checked = true
                }
            } else if count == 0 {
                break
            } else if errno != EINTR && errno != EAGAIN {
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
        }
        if !checked && !bytes.isEmpty { try checkPrefix(bytes) }
        return bytes
    }

    /// Refuses, from its first bytes, a file that cannot be MIDI: no RIFF RMID header and no
    /// `MThd` where the reader looks for it.
    static func checkPrefix(_ bytes: [UInt8]) throws(MIDIFileError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(MIDIFileError) in
            let mthd = Array("MThd".utf8)
            func matches(_ word: [UInt8], at offset: Int) -> Bool {
                buffer.count >= offset + word.count && (0..<word.count).allSatisfy { buffer[offset + $0] == word[$0] }
            }
            if matches(Array("RIFF".utf8), at: 0) {
                guard matches(Array("RMID".utf8), at: 8) else { throw .notMIDI(what: FileKind.describe(buffer)) }
                return
            }
            let last = min(buffer.count - 4, 1024)
            guard last >= 0, (0...last).contains(where: { matches(mthd, at: $0) }) else {
                throw .notMIDI(what: FileKind.describe(buffer))
            }
        }
    }

    static func writeBytes(_ bytes: [UInt8], to path: String) throws(MIDIFileError) {
        let temporary = path + ".partial-\(getpid())"
        guard let file = fopen(temporary, "wb") else {
            throw .unreadable(path: path, reason: "cannot write: " + String(cString: strerror(errno)))
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .unreadable(path: path, reason: "cannot write: " + reason)
        }
    }
}
