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
    /// `.NAME.partial-PID.EXT`, `.NAME.unnormalized-PID.wav`) of processes no longer alive, whichever
    /// output they were for (another process's render in flight on a shared folder is left alone).
    ///
    /// Returns the outputs a killed batch had published but not yet recorded: those whose staged
    /// file (see `publish`) was still a second name for them.
    @discardableResult
    static func removeStale(besides output: String) -> [FileIdentity] {
        let folder = POSIXSupport.folder(of: output)
        // A folder that cannot be listed has nothing to clean; the render itself reports its error.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var published: [FileIdentity] = []
        for name in names where name.hasPrefix(".") {
            guard let pid = owner(ofTemporary: name), pid != getpid(), !isAlive(pid) else { continue }
            let path = folder + "/" + name
            if let marker = name.ranges(of: ".partial-").last, let staged = FileIdentity(path: path),
                let target = FileIdentity(
                    path: folder + "/" + name[name.index(after: name.startIndex)..<marker.lowerBound]),
                staged == target
            {
                published.append(target)
            }
            unlink(path)
        }
        return published
    }

    /// The process that wrote a render's temporary file called `name`, or nil when the name is not one.
    static func owner(ofTemporary name: String) -> Int32? {
        for marker in [".partial-", ".unnormalized-"] {
            guard let range = name.ranges(of: marker).last else { continue }
            var digits = name[range.upperBound...]
            if marker == ".unnormalized-" {
                guard digits.hasSuffix(".wav") else { continue }
                digits = digits.dropLast(4)
            } else if let dot = digits.firstIndex(of: "."),
                digits[digits.index(after: dot)...].allSatisfy({ $0.isLetter || $0.isNumber })
            {
                digits = digits[..<dot]  // a staged output keeps its extension
            }
            if let pid = Int32(digits), pid > 0 { return pid }
        }
        return nil
    }

    /// Where a batch job that records its outputs renders first: `.NAME.partial-PID.EXT` beside the
    /// output (the extension kept: it says the file type).
    static func stagingPath(for output: String) -> String {
        let folder = POSIXSupport.folder(of: output)
        let name = output.split(separator: "/").last.map(String.init) ?? output
        let fileExtension = POSIXSupport.pathExtension(of: output)
        return (output.contains("/") ? folder + "/" : "") + ".\(name).partial-\(getpid())"
            + (fileExtension.isEmpty ? "" : "." + fileExtension)
    }

    /// Gives the complete file at `staged` the name `output` (replacing what is there), and keeps
    /// `staged` as a second name for it until the ledger records the output (`unlink(staged)`
    /// then): a process killed in between leaves the proof that the output is its batch's own, which
    /// `removeStale` finds. Where the file system has no hard links, the file is simply renamed.
    static func publish(staged: String, as output: String) throws(POSIXReason) {
        if link(staged, output) == 0 { return }
        if errno == EEXIST {
            // Replacing: a third name, renamed over the output (which is atomic); `staged` stays.
            let third = staged + ".partial-\(getpid())"
            unlink(third)
            if link(staged, third) == 0 {
                guard rename(third, output) == 0 else {
                    let code = errno
                    unlink(third)
                    throw POSIXReason(code)
                }
                return
            }
        }
        guard rename(staged, output) == 0 else { throw POSIXReason(errno) }
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
