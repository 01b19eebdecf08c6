import BundledSoundFont

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds the SoundFont a program should use, in this order:
/// 1. the font the program names (`resolve(explicit:)`; the `pianola` command's `--soundfont`),
/// 2. the `PIANOLA_SOUNDFONT` environment variable,
/// 3. the system's General MIDI font (Debian's `/usr/share/sounds/sf2/default-GM.sf2`) and the
///    usual SoundFont folders,
/// 4. the font bundled with Pianola (`PianolaGM.sf2`), so a fresh machine still plays.
///
/// A font named explicitly (argument or variable) that does not exist is an error, never a
/// silent fallback to another font. When nothing is found, `SoundFontError.noneFound` lists
/// every place looked in.
///
/// ## The bundled font
///
/// The font travels with the executable, not with the source checkout: it is never looked for in
/// the folder the package was built in. SwiftPM copies it, as a resource of the package's
/// `BundledSoundFont` target, into a `Pianola_BundledSoundFont.resources` folder beside every
/// executable that links Pianola (`swift build`, `swift test`, and an app's package
/// that depends on Pianola). ``defaultBundledCandidates()`` looks, in order:
/// 1. in `Pianola_BundledSoundFont.resources` beside the executable (where SwiftPM puts it; copy
///    the folder along with a binary you move),
/// 2. beside the executable (`PianolaGM.sf2` copied next to it),
/// 3. in the install prefix: `PREFIX/share/pianola/PianolaGM.sf2` for an executable in
///    `PREFIX/bin`.
///
/// The executable is the process's own file (`/proc/self/exe`, symbolic links resolved).
public struct SoundFontDiscovery: Sendable {
    /// Where a resolved font came from.
    public enum Source: String, Sendable, Codable {
        /// `option`: the path given to `resolve(explicit:)` (the `--soundfont` option); `environment`: the
        /// `PIANOLA_SOUNDFONT` variable; `system`: a well-known system file or a font in a system folder;
        /// `bundled`: the font shipped with Pianola. The raw value (the case's name) is what JSON output reports.
        case option, environment, system, bundled
    }

    /// A resolved font: its path and how it was chosen.
    public struct Resolution: Sendable, Equatable {
        /// The font file's path, with a leading `~/` expanded against `HOME`.
        public var path: String
        /// Which step of the search found the font.
        public var source: Source
    }

    /// The environment variable that names a default font.
    public static let environmentVariable = "PIANOLA_SOUNDFONT"

    /// Debian's and other distributions' well-known General MIDI fonts, checked before folder scans.
    public static let defaultSystemFiles = [
        "/usr/share/sounds/sf2/default-GM.sf2",
        "/usr/share/sounds/sf3/default-GM.sf3",
        "/usr/share/soundfonts/default.sf2",
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/soundfonts/FluidR3_GM.sf2",
    ]

    /// Folders scanned for `*.sf2`/`*.sf3` when none of the well-known files exists.
    public static let defaultSystemDirectories = [
        "/usr/share/sounds/sf2", "/usr/share/sounds/sf3", "/usr/share/soundfonts", "/usr/local/share/soundfonts",
        "~/.local/share/soundfonts", "~/.sounds/sf2",
    ]

    /// The environment read: `PIANOLA_SOUNDFONT` names a font, and `HOME` expands a leading `~/` in
    /// any path.
    public var environment: [String: String]
    /// Well-known font files, tried in order after the option and the variable; the first that exists wins.
    public var systemFiles: [String]
    /// Folders searched, in order, when no system file exists: the first `.sf2` or `.sf3` file directly
    /// inside (by name, `default*` first) wins. Subfolders are not searched.
    public var systemDirectories: [String]
    /// Paths where the bundled font may be, tried in order last (and by `bundledFont()`).
    public var bundledCandidates: [String]

    /// A discovery over the real process environment and the standard locations.
    public init() {
        self.init(
            environment: Self.processEnvironment(), systemFiles: Self.defaultSystemFiles,
            systemDirectories: Self.defaultSystemDirectories, bundledCandidates: Self.defaultBundledCandidates())
    }

    /// A discovery over the given environment and locations (tests inject their own).
    public init(
        environment: [String: String], systemFiles: [String], systemDirectories: [String], bundledCandidates: [String]
    ) {
        self.environment = environment
        self.systemFiles = systemFiles
        self.systemDirectories = systemDirectories
        self.bundledCandidates = bundledCandidates
    }

    /// Resolves the font to use; `explicit` is the path from a command-line option, if any.
    public func resolve(explicit: String? = nil) throws(SoundFontError) -> Resolution {
        if let explicit {
            let path = expand(explicit)
            guard Self.isFile(path) else { throw .notFound(path: explicit) }
            return Resolution(path: path, source: .option)
        }
        if let variable = environment[Self.environmentVariable], !variable.isEmpty {
            let path = expand(variable)
            guard Self.isFile(path) else { throw .notFound(path: "\(variable) (from \(Self.environmentVariable))") }
            return Resolution(path: path, source: .environment)
        }
        if let path = systemFiles.map(expand).first(where: Self.isFile) {
            return Resolution(path: path, source: .system)
        }
        for directory in systemDirectories.map(expand) {
            if let path = Self.soundFonts(in: directory).first { return Resolution(path: path, source: .system) }
        }
        if let path = bundledCandidates.map(expand).first(where: Self.isFile) {
            return Resolution(path: path, source: .bundled)
        }
        throw .noneFound(searched: searchedPlaces())
    }

    /// The bundled font, wherever this executable can see it (ignores the user's and system's
    /// fonts); `SoundFontError.bundledFontNotFound` lists the places looked in when it is in none.
    public func bundledFont() throws(SoundFontError) -> String {
        guard let path = bundledCandidates.map(expand).first(where: Self.isFile) else {
            throw .bundledFontNotFound(searched: bundledCandidates.map(expand))
        }
        return path
    }

    /// Every place `resolve()` looks when no font is named, in order, as its error lists them.
    func searchedPlaces() -> [String] {
        let variable = environment[Self.environmentVariable].map { _ in "$\(Self.environmentVariable) (empty)" }
        return [variable ?? "$\(Self.environmentVariable) (not set)"] + systemFiles.map(expand)
            + systemDirectories.map { expand($0) + "/" } + bundledCandidates.map(expand)
    }

    /// The bundled font's file name, looked for in each bundled candidate location.
    public static let bundledFileName = BundledSoundFont.fileName

    /// The folder SwiftPM copies the bundled font into, beside each executable that links
    /// Pianola: `Pianola_BundledSoundFont.resources` (the package's name, then the target's).
    public static let resourceBundleName = BundledSoundFont.resourceBundleName

    /// The places the bundled font can be, in the order they are tried: SwiftPM's resource
    /// folder beside the executable, then beside the executable, then `share/pianola` of the
    /// install prefix (see "The bundled font" above). Empty when the executable's path is unknown.
    public static func defaultBundledCandidates() -> [String] {
        executablePath().map(bundledCandidates(besideExecutable:)) ?? []
    }

    /// The bundled font's places for an executable at `executable`, in order.
    public static func bundledCandidates(besideExecutable executable: String) -> [String] {
        let directory = parent(executable)
        return [
            directory + "/" + resourceBundleName + "/" + bundledFileName,
            directory + "/" + bundledFileName,
            parent(directory) + "/share/pianola/" + bundledFileName,
        ]
    }

    // MARK: File system helpers

    private func expand(_ path: String) -> String {
        guard path.hasPrefix("~/"), let home = environment["HOME"] else { return path }
        return home + path.dropFirst()
    }

    static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// SoundFont files directly in `directory`, sorted by name, `default*` first.
    static func soundFonts(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            let lower = name.lowercased()
            if lower.hasSuffix(".sf2") || lower.hasSuffix(".sf3") { names.append(name) }
        }
        names.sort { lhs, rhs in
            let (l, r) = (lhs.lowercased().hasPrefix("default"), rhs.lowercased().hasPrefix("default"))
            return l != r ? l : lhs < rhs
        }
        return names.map { directory + "/" + $0 }.filter(isFile)
    }

    static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let separator = text.firstIndex(of: "=") {
                result[String(text[..<separator])] = String(text[text.index(after: separator)...])
            }
            pointer += 1
        }
        return result
    }

    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
