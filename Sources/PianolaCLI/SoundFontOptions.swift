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

    @Option(
        help: ArgumentHelp(
            "Which samples to load: song (only the presets the song plays, read before it starts; the default for play and render), all (the whole font once: the default for live, and faster for many files with one big font) or programs (live: only the presets given with --program; other channels stay silent and program changes are ignored).",
            valueName: "what"),
        completion: SampleLoad.completion, transform: SampleLoad.parser(for: "--load"))
    var load: SampleLoad?

    /// What `--load` chooses.
    enum SampleLoad: String, ArgumentChoice {
        case song, all, programs
    }

    /// `--load` for a command that plays songs known in advance (play, render): on demand
    /// unless `all`.
    func songLoading() throws -> SamplerNode.SampleLoading {
        guard load != .programs else {
            throw ValidationError("--load programs is for live; play and render load what the song plays (song) or all")
        }
        return load == .all ? .whole : .onDemand
    }

    /// `--load` for live: the whole font unless `programs`, which needs at least one --program.
    func liveSettings(_ settings: SamplerNode.Settings) throws -> SamplerNode.Settings {
        var settings = settings
        switch load {
        case nil, .all?: return settings
        case .song?:
            throw ValidationError(
                "--load song needs a song: live loads all, or only --program's presets with --load programs")
        case .programs?:
            guard !settings.programOverrides.isEmpty else {
                throw ValidationError("--load programs loads the presets given with --program: give at least one")
            }
            settings.sampleLoading = .onDemand
            settings.ignoresPresetChanges = true
            return settings
        }
    }

    /// The fonts given (each must exist), or the discovered one.
    func resolve() throws(SoundFontError) -> [SoundFontDiscovery.Resolution] {
        let discovery = SoundFontDiscovery()
        guard !soundfont.isEmpty else { return [try discovery.resolve()] }
        var resolved: [SoundFontDiscovery.Resolution] = []
        for path in soundfont { resolved.append(try discovery.resolve(explicit: path)) }
        return resolved
    }

    /// The "SoundFont: FILE (why)" line, naming the file a link led to ("SoundFont: FILE (why,
    /// via LINK)"), or "SoundFonts: a + b (via LINK) …" for a stack.
    static func describe(_ fonts: [SoundFontDiscovery.Resolution]) {
        Terminal.writeError(line(fonts) + "\n")
        // What loads but plays wrong; what cannot load is the loader's error, reported where it fails.
        for font in fonts {
            for warning in (try? SoundFontInfo.inspect(path: font.path)) ?? [] {
                Terminal.writeError("warning: \(font.resolvedPath): \(warning)\n")
            }
        }
    }

    /// The "SoundFont: …" line, without its newline.
    static func line(_ fonts: [SoundFontDiscovery.Resolution]) -> String {
        let explanation = fonts.first?.source.explanation ?? ""
        if fonts.count == 1, let font = fonts.first {
            return "SoundFont: \(font.resolvedPath) (\(explanation)\(font.linkPath.map { ", via \($0)" } ?? ""))"
        }
        let names = fonts.map { font in font.resolvedPath + (font.linkPath.map { " (via \($0))" } ?? "") }
        return "SoundFonts: \(names.joined(separator: " + ")) (\(explanation))"
    }

    /// The fonts in a JSON object: `soundFonts`, the files that play (each link followed), and
    /// `soundFontLinks`, in the same order, the link each was given as (null for a file given
    /// as itself).
    static func json(_ paths: [String]) -> [String: JSONValue] {
        let links = paths.map { SoundFontDiscovery.linkTarget(of: $0) }
        return [
            "soundFonts": .array(zip(paths, links).map { .string($1 ?? $0) }),
            "soundFontLinks": .array(zip(paths, links).map { $1 == nil ? .null : .string($0) }),
        ]
    }
}
