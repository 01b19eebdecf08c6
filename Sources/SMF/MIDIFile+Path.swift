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
        try read(bytes: readBytes(path: path), strict: strict, threads: threads)
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
        var info = stat()
        if fstat(fileno(file), &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable(path: path, reason: "it is a directory")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(0, Int(info.st_size)))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count {
                if ferror(file) != 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
                break
            }
        }
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
