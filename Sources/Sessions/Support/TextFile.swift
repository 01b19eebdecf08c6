import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Writing small text files whole or not at all. (Foundation's atomic writes leave a
/// `TemporaryDirectory.*` behind in the system's temporary folder on Linux; this does not.)
enum TextFile {
    /// Why a file could not be written: the system's reason.
    struct Failure: Error {
        var reason: String
    }

    /// Writes `value` as JSON (sorted keys, a newline at the end) to `path`, as `write` does.
    static func writeJSON(_ value: some Encodable, to path: String) throws(SessionError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text: String
        do { text = String(decoding: try encoder.encode(value), as: UTF8.self) + "\n" } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
        do { try write(text, to: path) } catch { throw .cannotWrite(path: path, reason: error.reason) }
    }

    /// Writes `text` to `path` through a temporary name beside it and a rename: a reader never
    /// sees half a file, and an interrupted write leaves the old file (or none).
    static func write(_ text: String, to path: String) throws(Failure) {
        let temporary = path + ".partial"
        guard let file = fopen(temporary, "w") else { throw Failure(reason: String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        let written = fwrite(bytes, 1, bytes.count, file)
        let closed = fclose(file)
        guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(reason: reason)
        }
    }
}
