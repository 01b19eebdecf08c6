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
        guard reason.hasSuffix(MIDIFileError.sizeLimitHint) else { return reason }
        return reason.dropLast(MIDIFileError.sizeLimitHint.count) + "(raise it with --max-midi-size MB)"
    }
}
