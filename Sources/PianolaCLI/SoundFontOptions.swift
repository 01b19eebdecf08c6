import ArgumentParser
import Pianola

/// `-s/--soundfont`, repeatable: the SoundFonts play, render and live stack.
struct SoundFontOptions: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "SoundFont (.sf2/.sf3); repeat to stack fonts (a later font's presets hide an earlier one's); see `pianola soundfont`.",
            valueName: "file"),
        completion: .file(extensions: ["sf2", "sf3"]))
    var soundfont: [String] = []

    /// The fonts given (each must exist), or the discovered one.
    func resolve() throws(SoundFontError) -> [SoundFontDiscovery.Resolution] {
        let discovery = SoundFontDiscovery()
        guard !soundfont.isEmpty else { return [try discovery.resolve()] }
        var resolved: [SoundFontDiscovery.Resolution] = []
        for path in soundfont { resolved.append(try discovery.resolve(explicit: path)) }
        return resolved
    }

    /// The "SoundFont: …" line (or "SoundFonts: a + b …" for a stack).
    static func describe(_ fonts: [SoundFontDiscovery.Resolution]) {
        let paths = fonts.map(\.path).joined(separator: " + ")
        let explanation = fonts.first?.source.explanation ?? ""
        Terminal.writeError("SoundFont\(fonts.count > 1 ? "s" : ""): \(paths) (\(explanation))\n")
        // What loads but plays wrong; what cannot load is the loader's error, reported where it fails.
        for font in fonts {
            for warning in (try? SoundFontInfo.inspect(path: font.path)) ?? [] {
                Terminal.writeError("warning: \(font.path): \(warning)\n")
            }
        }
    }
}
