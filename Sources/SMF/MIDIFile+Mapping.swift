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
        path: String, isCancelled: (() -> Bool)? = nil,
        _ body: (UnsafeBufferPointer<UInt8>) throws(MIDIFileError) -> Result
    ) throws(MIDIFileError) -> Result {
        func copied(_ bytes: [UInt8]) throws(MIDIFileError) -> Result {
            try bytes.withUnsafeBufferPointer { (bytes) throws(MIDIFileError) in try body(bytes) }
        }
        // Not blocking: opening a named pipe would otherwise wait for a writer, uninterruptibly.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        let isLargeFile =
            fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            && Int(info.st_size) >= mappingMinimumBytes
        let length = Int(info.st_size)
        if isLargeFile && length > sizeLimit {
            close(descriptor)
            throw .tooLarge(path: path, bytes: length, limit: sizeLimit)
        }
        if isLargeFile {
            // Refused from its first bytes before anything is mapped (a mapping reads the whole file in).
            var prefix = [UInt8](repeating: 0, count: prefixBytes)
            let count = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, prefixBytes, 0) }
            if count == prefixBytes {
                do throws(MIDIFileError) { try checkPrefix(prefix) } catch {
                    close(descriptor)
                    throw error
                }
            }
        }
        var slot: Int32 = 0
        guard isLargeFile, let address = pianola_map_file(descriptor, length, &slot) else {
            // Read from this descriptor: opening a named pipe again would wait for a new writer.
            defer { close(descriptor) }
            return try copied(readBytes(from: descriptor, path: path, isCancelled: isCancelled))
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
            return try copied(readBytes(path: path, isCancelled: isCancelled))
        }
        return pianola_mapped_file_damaged(slot) == 0
            ? result : try copied(readBytes(path: path, isCancelled: isCancelled))
    }
}
