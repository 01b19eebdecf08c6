import AudioFiles
import FoundationEssentials
import MIDICore
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The temporary files renders write before giving an output its name (`.NAME.partial-PID`, see
/// `AudioFileWriter`), and what killed renders leave of them.
enum PartialFiles {
    /// Removes what killed renders left in `output`'s folder: the temporary files (`.NAME.partial-PID`,
    /// `.NAME.unnormalized-PID.wav`) of processes no longer alive, whichever output they were for
    /// (another process's render in flight on a shared folder is left alone).
    static func removeStale(besides output: String) {
        let folder = POSIXSupport.folder(of: output)
        // A folder that cannot be listed has nothing to clean; the render itself reports its error.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(".") {
            guard let pid = owner(ofTemporary: name), pid != getpid() else { continue }
            if !isAlive(pid) { unlink(folder + "/" + name) }
        }
    }

    /// The process that wrote a render's temporary file called `name`, or nil when the name is not one.
    static func owner(ofTemporary name: String) -> Int32? {
        for marker in [".partial-", ".unnormalized-"] {
            guard let range = name.ranges(of: marker).last else { continue }
            var digits = name[range.upperBound...]
            if marker == ".unnormalized-" {
                guard digits.hasSuffix(".wav") else { continue }
                digits = digits.dropLast(4)
            }
            if let pid = Int32(digits), pid > 0 { return pid }
        }
        return nil
    }

    /// Whether process `pid` runs: it exists and is not a zombie (a killed process whose parent
    /// has not collected it still answers `kill(pid, 0)`).
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno != ESRCH else { return false }
        // Without /proc (not Linux), existing is taken as alive.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = POSIXSupport.trimmingBlanks(stat[stat.index(after: close)...]).first
        return state != "Z" && state != "X"
    }
}
