import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of `kilobytes` mounted on a new temporary folder, for tests of a full disk; nil
/// (with the reason) where the test cannot mount one (not root, no mount permission). Released,
/// it is unmounted and its folder removed.
public final class SmallFileSystem {
    private let folder: TemporaryFolder

    /// Where it is mounted.
    public var path: String { folder.path }

    private init(folder: TemporaryFolder) { self.folder = folder }

    /// Mounts one (read-only with `readOnly`); the reason it cannot, otherwise.
    public static func mount(kilobytes: Int, readOnly: Bool = false) -> Result<SmallFileSystem, SkipReason> {
        let folder: TemporaryFolder
        do { folder = try TemporaryFolder("small-fs") } catch {
            return .failure(SkipReason(text: "\(error)"))
        }
        let options = "size=\(kilobytes)k" + (readOnly ? ",ro" : "")
        let status = run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", folder.path])
        guard status == 0 else {
            folder.remove()
            return .failure(SkipReason(text: "cannot mount a small tmpfs here (mount exited \(status); needs root)"))
        }
        return .success(SmallFileSystem(folder: folder))
    }

    /// Fills what is left with one file (`filler`), leaving `leaving` bytes free (about: the
    /// file system counts whole blocks).
    public func fill(leaving: Int = 0) {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return }
        let free = Int(stats.f_bavail) * Int(stats.f_frsize)
        let descriptor = open(path + "/filler", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        defer { close(descriptor) }
        var left = max(0, free - leaving)
        let block = [UInt8](repeating: 0, count: 4_096)
        while left > 0 {
            let written = block.withUnsafeBytes { write(descriptor, $0.baseAddress, min(left, block.count)) }
            guard written > 0 else { break }
            left -= written
        }
    }

    /// The files in it, other than the filler.
    public var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0 != "filler" }.sorted()
    }

    deinit {
        _ = Self.run(["umount", path])
        folder.remove()
    }

    private static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Why a test that needs something of the machine is skipped.
public struct SkipReason: Error, CustomStringConvertible {
    public let text: String
    public var description: String { text }
}
