#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MIDIFile {
    /// Reads a file from disk (see `read(bytes:strict:threads:)`).
    public static func read(
        path: String, strict: Bool = false, threads: Int = 1
    ) throws(MIDIFileError)
        -> ReadResult
    {
        try withBytes(path: path) { (bytes) throws(MIDIFileError) in
            try read(buffer: bytes, strict: strict, threads: threads)
        }
    }

    /// Writes the file to `path` through a temporary name and a rename, so an interrupted write
    /// never leaves a half-written file under the final name.
    public func write(to path: String, runningStatus: Bool = true) throws(MIDIFileError) {
        try MIDIFile.writeBytes(serialized(runningStatus: runningStatus), to: path)
    }

    /// The raw bytes of a file (typed errors, no Foundation).
    public static func readBytes(path: String) throws(MIDIFileError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        return try readBytes(from: file, path: path)
    }

    /// The raw bytes of the open `file` (at `path`, for errors), read to its end.
    static func readBytes(from file: UnsafeMutablePointer<FILE>, path: String) throws(MIDIFileError) -> [UInt8] {
        var info = stat()
        if fstat(fileno(file), &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable(path: path, reason: "it is a directory")
        }
        // Read straight into an array of the file's size (one allocation, no copy); a file that
        // grows while being read is read on in chunks.
        let size = max(0, Int(info.st_size))
        var failed = false
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            while count < size {
                let read = fread(buffer.baseAddress! + count, 1, size - count, file)
                count += read
                if read == 0 {
                    failed = ferror(file) != 0
                    break
                }
            }
        }
        // Whatever follows (a pipe's bytes, which have no size, or a file that grew).
        let next = failed ? EOF : fgetc(file)
        if next != EOF { ungetc(next, file) }
        var chunk = [UInt8](repeating: 0, count: next == EOF ? 0 : 1 << 16)
        while next != EOF && !failed {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count {
                failed = ferror(file) != 0
                break
            }
        }
        if failed { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        return bytes
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
