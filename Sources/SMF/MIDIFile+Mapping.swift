import CMappedFile

#if canImport(Glibc)
    import Glibc
#endif

extension MIDIFile {
    /// Files at least this large are mapped rather than copied (see `withBytes`).
    static let mappingMinimumBytes = 1 << 20

    /// Calls `body` with the bytes of the file at `path`, with `readBytes`'s errors.
    ///
    /// A large regular file is mapped from the page cache instead of copied into fresh memory,
    /// which the kernel must zero a page at a time (4.5 ms against 0.13 ms for a cached 3.2 MB
    /// file on the benchmark machine). Should the file be truncated while it is mapped, the
    /// mapping reads zeros instead of raising SIGBUS (see CMappedFile.h) and the file is read
    /// again, so `body`'s answer is for the bytes as they then are. Small files, pipes and
    /// anything that cannot be mapped go through `readBytes`.
    static func withBytes<Result>(
        path: String, _ body: (UnsafeBufferPointer<UInt8>) throws(MIDIFileError) -> Result
    ) throws(MIDIFileError) -> Result {
        func copied(_ bytes: [UInt8]) throws(MIDIFileError) -> Result {
            try bytes.withUnsafeBufferPointer { (bytes) throws(MIDIFileError) in try body(bytes) }
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        let isLargeFile =
            fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            && Int(info.st_size) >= mappingMinimumBytes
        var slot: Int32 = 0
        let length = Int(info.st_size)
        guard isLargeFile, let address = pianola_map_file(descriptor, length, &slot) else {
            // Read from this descriptor: opening a named pipe again would wait for a new writer.
            guard let file = fdopen(descriptor, "rb") else {
                close(descriptor)
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            defer { fclose(file) }
            return try copied(readBytes(from: file, path: path))
        }
        close(descriptor)  // the mapping keeps the file
        defer { pianola_unmap_file(address, length, slot) }
        let bytes = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: length)
        // What was read over zeros (the file shrank meanwhile), answer or error, is read again.
        let result: Result
        do {
            result = try body(bytes)
        } catch {
            guard pianola_mapped_file_damaged(slot) != 0 else { throw error }
            return try copied(readBytes(path: path))
        }
        return pianola_mapped_file_damaged(slot) == 0 ? result : try copied(readBytes(path: path))
    }
}
