import MIDICore
import PianolaSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MIDIFile {
    /// Reads a file from a `file:` URL (see `read(bytes:strict:)`).
    public static func read(contentsOf url: URL, strict: Bool = false) throws(MIDIFileError) -> ReadResult {
        try read(path: url.localPath { MIDIFileError.unreadable(path: $0, reason: URL.notAFileReason) }, strict: strict)
    }

    /// Writes the file to a `file:` URL through a temporary name and a rename.
    public func write(to url: URL, runningStatus: Bool = true) throws(MIDIFileError) {
        try write(
            to: url.localPath { MIDIFileError.unreadable(path: $0, reason: URL.notAFileReason) },
            runningStatus: runningStatus)
    }
}
