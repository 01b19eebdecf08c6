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

    /// An argument as a shell would need it.
    static func quote(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=+,".contains($0) }
        return plain && !argument.isEmpty ? argument : "'" + argument.replacing("'", with: "'\\''") + "'"
    }

    /// Levenshtein distance, ignoring case.
    static func distance(_ a: String, _ b: String) -> Int { TextMatching.editDistance(a, b) }
}
