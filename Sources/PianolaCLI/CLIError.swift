import ArgumentParser

/// A user-facing failure: printed as one line (`pianola: <message>`) with a non-zero exit status.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}
