import ArgumentParser
import FoundationEssentials
import MIDICore
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The first argument when it is not a command: a MIDI file given to `pianola` itself, or a
/// misspelt command. Each gets a way out, in one line.
enum Mistakes {
    /// The commands, by name (and `help`).
    static var commandNames: [String] {
        PianolaCommand.configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    }

    /// What is wrong with `arguments` (pianola's, without the program name) and what to type
    /// instead, or nil when the first argument is an option or a command.
    static func explain(_ arguments: [String]) -> String? {
        if let habit = fluidSynthHabit(arguments) { return habit }
        // `pianola help NAME` for a NAME that is no command: the argument parser would print the
        // root help and exit 0, as if it had been understood.
        if arguments.first == "help", arguments.count > 1, !arguments[1].hasPrefix("-"),
            !commandNames.contains(arguments[1])
        {
            let name = arguments[1]
            let nearest = commandNames.filter { $0 != "help" }.min { distance(name, $0) < distance(name, $1) }
            if let nearest, distance(name, nearest) <= max(2, name.count / 3) {
                return "no command '\(name)' to help with; did you mean `pianola help \(nearest)`?"
            }
            return "no command '\(name)' to help with (`pianola --help` lists the commands)"
        }
        guard let first = arguments.first, !first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
        if midiFileExtensions.contains(POSIXSupport.pathExtension(of: first).lowercased())
            || FileManager.default.fileExists(atPath: first)
        {
            let quoted = arguments.map(quote).joined(separator: " ")
            return "'\(first)' is not a command; did you mean `pianola play \(quoted)`? "
                + "(`pianola render \(quote(first)) -o out.wav` writes a file)"
        }
        let nearest = commandNames.min { distance(first, $0) < distance(first, $1) }
        if let nearest, distance(first, nearest) <= max(2, first.count / 3) {
            return
                "unknown command '\(first)'; did you mean `pianola \(nearest)`? (`pianola --help` lists the commands)"
        }
        return "unknown command '\(first)' (`pianola --help` lists the commands)"
    }

    /// `pianola -F out.wav font.sf2 song.mid`, as `fluidsynth` takes it (`-F`/`--fast-render`, the
    /// fonts and songs in any order): the `pianola render` line that does it.
    static func fluidSynthHabit(_ arguments: [String]) -> String? {
        guard let first = arguments.first, first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
        var output: String?
        var fonts: [String] = []
        var songs: [String] = []
        var rate: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let next = index + 1 < arguments.count ? arguments[index + 1] : nil
            if argument == "-F" || argument == "--fast-render" {
                output = next
                index += 1
            } else if argument.hasPrefix("--fast-render=") {
                output = String(argument.dropFirst("--fast-render=".count))
            } else if argument == "-r" || argument == "--sample-rate" {
                rate = next
                index += 1
            } else if isSoundFont(argument) {
                fonts.append(argument)
            } else if midiFileExtensions.contains(POSIXSupport.pathExtension(of: argument).lowercased()) {
                songs.append(argument)
            }
            index += 1
        }
        guard let output, !songs.isEmpty else { return nil }
        let command =
            ["pianola", "render"] + songs.map(quote) + fonts.flatMap { ["-s", quote($0)] } + ["-o", quote(output)]
            + (rate.map { ["-r", quote($0)] } ?? [])
        return "pianola is not fluidsynth: to render to a file, `\(command.joined(separator: " "))`"
    }

    /// Whether `path` names a SoundFont: by its extension (.sf2, .sf3), or by its first bytes
    /// (`RIFF` … `sfbk`) for a regular file that has another (pipes and devices are not read).
    static func isSoundFont(_ path: String) -> Bool {
        if ["sf2", "sf3"].contains(POSIXSupport.pathExtension(of: path).lowercased()) { return true }
        // Only a regular file is read here: opening a FIFO would wait for its writer.
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 12)
        guard fread(&header, 1, 12, file) == 12 else { return false }
        return header[0..<4].elementsEqual("RIFF".utf8) && header[8..<12].elementsEqual("sfbk".utf8)
    }

    /// The error for a SoundFont among the MIDI files of `command`, naming `-s`; nil when none is.
    static func soundFontAmongSongs(_ inputs: [String], command: String) -> ValidationError? {
        guard let font = inputs.first(where: { !isFolder($0) && isSoundFont($0) }) else { return nil }
        // (The parser first checks a command with its first file alone: the others are then still
        // on the command line.)
        var songs = inputs.filter { $0 != font }
        if songs.isEmpty {
            songs = CommandLine.arguments.dropFirst(2).filter {
                midiFileExtensions.contains(POSIXSupport.pathExtension(of: $0).lowercased())
            }
        }
        let example = (songs.isEmpty ? ["song.mid"] : songs.map(quote)) + ["-s", quote(font)]
        return ValidationError(
            "\(font) is a SoundFont: give it with -s (`pianola \(command) \(example.joined(separator: " "))`)")
    }

    /// Whether `path` is a folder.
    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// An argument as a shell would need it.
    static func quote(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=+,".contains($0) }
        return plain && !argument.isEmpty ? argument : "'" + argument.replacing("'", with: "'\\''") + "'"
    }

    /// Levenshtein distance, ignoring case.
    static func distance(_ a: String, _ b: String) -> Int { TextMatching.editDistance(a, b) }
}
