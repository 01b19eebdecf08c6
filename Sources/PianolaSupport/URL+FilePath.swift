#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension URL {
    /// Why a URL other than `file:` is refused where Pianola reads or writes a file.
    package static let notAFileReason = "not a file URL (Pianola reads and writes local files only)"

    /// The file-system path of a `file:` URL; for any other scheme, the error `refuse` makes from
    /// the URL's text (each module's own error type, so callers keep typed throws).
    package func localPath<Failure: Error>(or refuse: (String) -> Failure) throws(Failure) -> String {
        guard isFileURL else { throw refuse(absoluteString) }
        return path(percentEncoded: false)
    }
}
