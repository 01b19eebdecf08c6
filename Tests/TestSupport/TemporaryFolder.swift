// Temporary folders for tests: each is made for one piece of work and removed when that work
// ends, however it ends.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with a new, empty folder named `pianola-NAME-XXXXXX` in the system's temporary
/// directory (`$TMPDIR`, else `/tmp`), or in `parent`, then removes the folder with everything in
/// it: when `body` returns and when it throws (a failed `#require` too). `scripts/test` fails when
/// a `pianola-*` folder is left behind. With `PIANOLA_KEEP_TEST_FILES=1` set the folder is kept,
/// for a look after a failure, and its path is printed.
@discardableResult
public func withTemporaryFolder<Result>(
    _ name: String = "test", in parent: String? = nil, _ body: (String) throws -> Result
) throws -> Result {
    let folder = try TemporaryFolder(name, in: parent)
    defer { folder.remove() }
    return try body(folder.path)
}

/// `withTemporaryFolder` for a body that awaits.
@discardableResult
public func withTemporaryFolder<Result>(
    _ name: String = "test", in parent: String? = nil, isolation: isolated (any Actor)? = #isolation,
    _ body: (String) async throws -> Result
) async throws -> Result {
    let folder = try TemporaryFolder(name, in: parent)
    defer { folder.remove() }
    return try await body(folder.path)
}

/// A folder made with `mkdtemp`; `remove()` takes it away (unless `PIANOLA_KEEP_TEST_FILES` is set).
/// Tests use `withTemporaryFolder`; this is for TestSupport's own owners of a folder.
struct TemporaryFolder: Sendable {
    let path: String

    init(_ name: String, in parent: String? = nil) throws {
        let base = parent ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/pianola-\(name)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TemporaryFolderError(
                description: "cannot make a folder in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    func remove() {
        if getenv("PIANOLA_KEEP_TEST_FILES") != nil {
            FileHandle.standardError.write(Data("kept \(path) (PIANOLA_KEEP_TEST_FILES)\n".utf8))
            return
        }
        // What cannot be removed stays, and scripts/test names it.
        try? FileManager.default.removeItem(atPath: path)
    }
}

struct TemporaryFolderError: Error, CustomStringConvertible {
    let description: String
}
