#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Path text and folders with the C library alone (threads: `SystemThread`), so that the modules
/// above need no more of Foundation than FoundationEssentials (Foundation proper costs each process about 7 MB of
/// memory and some milliseconds to start).
package enum POSIXSupport {
    /// The folder part of `path`: "." when it has none, "/" for a file at the root.
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The extension of the path's last component, without the dot ("" when it has none or the
    /// name starts with its only dot, as `.hidden`).
    package static func pathExtension(of path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `path` without the extension of its last component (and its dot).
    package static func deletingPathExtension(_ path: String) -> String {
        let suffix = pathExtension(of: path)
        return suffix.isEmpty ? path : String(path.dropLast(suffix.count + 1))
    }

    /// Creates `path` and any missing folders above it (as `mkdir -p`); the error is the C
    /// library's reason ("Permission denied", "Not a directory").
    package static func makeDirectories(_ path: String) throws(POSIXReason) {
        var built = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            built += (built.isEmpty || built.hasSuffix("/") ? "" : "/") + component
            if mkdir(built, 0o755) != 0 && errno != EEXIST { throw POSIXReason(errno) }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw POSIXReason(errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw POSIXReason(ENOTDIR) }
    }

    /// `text` without spaces and tabs at either end.
    package static func trimmingBlanks<S: StringProtocol>(_ text: S) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = text.firstIndex { !blank($0) } ?? text.endIndex
        let end = text.lastIndex { !blank($0) }.map { text.index(after: $0) } ?? start
        return Substring(text[start..<max(start, end)])
    }
}

/// A C library error, described by `strerror`.
package struct POSIXReason: Error, CustomStringConvertible {
    package let code: Int32
    package init(_ code: Int32) { self.code = code }
    package var description: String { String(cString: strerror(code)) }
}
