import Pianola

/// What to try next, appended to errors a user can get around.
enum Hints {
    static let devices = "`pianola devices` lists the sound devices (choose one with --device)"

    /// A job's failure with the way out: an output that exists names --force.
    static func job(_ reason: String) -> String {
        reason.hasSuffix(BatchError.existsPhrase) ? reason + " (--force replaces it)" : reading(reason)
    }

    /// A file's read failure with the way out where there is one: a file over the size limit
    /// names the option that raises it.
    static func reading(_ reason: String) -> String {
        guard reason.hasSuffix(MIDIFileError.sizeLimitHint) else { return commandLine(reason) }
        return reason.dropLast(MIDIFileError.sizeLimitHint.count) + "(raise it with --max-midi-size MB)"
    }

    /// The library's advice names library calls, for any program; the command's names its options
    /// and commands. Each pair: the library's words (a constant of the error's type), then these.
    static let commandLineWording: [(library: String, commandLine: String)] = [
        (SoundFontError.loadHint, "pass --soundfont FILE, set PIANOLA_SOUNDFONT, or install fluid-soundfont-gm"),
        (MIDIIOError.sourcesHint, "(see `pianola devices`)"),
        (MIDIIOError.destinationsHint, "(see `pianola devices`)"),
        (AudioFileTap.fileExistsReason, "the file exists (use --force to replace it)"),
        (EffectSpecError.catalogHint, "see `pianola fx list`"),
        (
            RenderError.maximumSecondsHint,
            "(--max-length raises it; a damaged file can say hours: `pianola info` lists its defects)"
        ),
        (
            AudioRecorder.rateEffectRefusal,
            "changes the pace, which a recording as it happens cannot (use `pianola process` on the take)"
        ),
        (PlaybackSession.transportPaceHint, "no --speed, --loop or rate effect"),
    ]

    /// `text` (a library error's description) with the library's advice in the command's words.
    static func commandLine(_ text: String) -> String {
        commandLineWording.reduce(text) { text, pair in text.replacing(pair.library, with: pair.commandLine) }
    }
}
