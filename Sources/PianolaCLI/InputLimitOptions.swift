import ArgumentParser
import Pianola

/// `--max-midi-size`: how large a MIDI file the command reads (`MIDIFile.sizeLimit`).
struct InputLimitOptions: ParsableArguments {
    @Option(
        name: .customLong("max-midi-size"), parsing: .unconditional,
        help: ArgumentHelp(
            "Refuse MIDI files larger than this many megabytes (a file is checked before it is read).",
            valueName: "mb"))
    var maximumMegabytes = MIDIFile.defaultSizeLimit / 1_000_000

    func validate() throws {
        guard (1...100_000).contains(maximumMegabytes) else {
            throw ValidationError("--max-midi-size must be between 1 and 100000 (megabytes), got \(maximumMegabytes)")
        }
    }

    /// Sets the limit for this process.
    func apply() {
        MIDIFile.sizeLimit = maximumMegabytes * 1_000_000
    }
}
