#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Free space on the file system that holds a folder, and whether a failed write ran out of it:
/// one place for what the writers and the batch ledger say about a full disk.
package enum FileSystemSpace {
    /// Bytes an unprivileged process may still write in `folder`'s file system; nil when it cannot
    /// be asked (the folder is missing or unreachable: opening a file there fails with its name).
    package static func availableBytes(in folder: String) -> Int? {
        var stats = statvfs()
        guard statvfs(folder.isEmpty ? "." : folder, &stats) == 0 else { return nil }
        return Int(
            clamping: UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize)).partialValue)
    }

    /// Whether `folder`'s file system is mounted read-only (nothing can be written there, whatever
    /// its free space says).
    package static func isReadOnly(_ folder: String) -> Bool {
        var stats = statvfs()
        guard statvfs(folder.isEmpty ? "." : folder, &stats) == 0 else { return false }
        return stats.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Whether a failure with `errno` came from a full file system (or a spent quota): the error
    /// says so, or the folder's file system has no block left (libsndfile reports a full disk with
    /// errors of its own). A read-only file system is not a full one.
    package static func isOutOfSpace(errno code: Int32, folder: String) -> Bool {
        if code == ENOSPC || code == EDQUOT { return true }
        if code == EROFS || isReadOnly(folder) { return false }
        return availableBytes(in: folder) == 0
    }
}
