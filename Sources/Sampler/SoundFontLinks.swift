#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SoundFontDiscovery {
    /// The file a symbolic link at `path` leads to, every link on the way followed (Debian's
    /// `/usr/share/sounds/sf2/default-GM.sf2` → `/etc/alternatives/default-GM.sf2` → the font the
    /// alternatives chose), as an absolute path; nil when `path` is no symbolic link or leads to
    /// nothing.
    ///
    /// The same path can name another font once a link has been switched: the file it leads to
    /// says which font plays.
    public static func linkTarget(of path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK, let resolved = realpath(path, nil) else {
            return nil
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension SoundFontDiscovery.Resolution {
    /// The font file itself: `path` with its symbolic links followed (see
    /// ``SoundFontDiscovery/linkTarget(of:)``), or `path` when it is no link.
    public var resolvedPath: String { SoundFontDiscovery.linkTarget(of: path) ?? path }

    /// The link the font was found through: `path` when it is a symbolic link, else nil.
    public var linkPath: String? { SoundFontDiscovery.linkTarget(of: path) == nil ? nil : path }
}
