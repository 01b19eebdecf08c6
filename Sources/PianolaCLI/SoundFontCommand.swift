import ArgumentParser
import Pianola

struct SoundFontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundfont",
        abstract: "Show which SoundFont Pianola uses, and what it holds.",
        discussion: """
            Without options, prints the font that `play` and `render` would use and why: the file \
            itself, and the symbolic link it was found through, if any (Debian's default-GM.sf2 \
            leads through /etc/alternatives to the font chosen there). With --presets, loads the \
            font and lists its presets (bank, program, name), then reads it as the native voice \
            engine does: a line saying it reads the font (its presets, instruments and samples, \
            and whether every sample plays), and a warning for each preset that plays silence. A \
            font either reader refuses is one line naming the file and the first problem, and \
            nothing is printed.
            """)

    @Option(name: .shortAndLong, help: ArgumentHelp("The SoundFont to inspect (.sf2/.sf3).", valueName: "file"))
    var soundfont: String?

    @Flag(help: "Load the font and list its presets; also read it as the native voice engine does.")
    var presets = false

    @Flag(
        help:
            "Print JSON instead of text (path: the file, link: the link given, or null; source; with --presets also presets, warnings and native)."
    )
    var json = false

    func run() throws {
        let resolution = try SoundFontDiscovery().resolve(explicit: soundfont)
        let info = presets ? try SoundFontInfo.load(path: resolution.path) : nil
        let native = presets ? try NativeFontReport(path: resolution.path) : nil
        if json {
            var object: [String: JSONValue] = [
                "path": .string(resolution.resolvedPath), "link": resolution.linkPath.map { .string($0) } ?? .null,
                "source": .string(resolution.source.rawValue),
            ]
            if let info {
                object["presets"] = .array(
                    info.presets.map {
                        .object([
                            "bank": .number(Double($0.bank)), "program": .number(Double($0.program)),
                            "name": .string($0.name),
                        ])
                    })
                object["warnings"] = .array(info.warnings.map { .string($0) })
            }
            if let native { object["native"] = native.json }
            print(JSONValue.object(object).serialized())
            return
        }
        print(SoundFontOptions.line([resolution]))
        if let info {
            for preset in info.presets {
                print(String(format3(preset.bank)) + ":" + String(format3(preset.program)) + "  " + preset.name)
            }
            for warning in info.warnings { print("FluidSynth \(warning)") }
        }
        if let native {
            print(native.summary)
            for warning in native.warnings { print(warning) }
        }
    }

    private func format3(_ value: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }
}
