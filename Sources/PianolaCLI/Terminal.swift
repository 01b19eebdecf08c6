import ArgumentParser
import Pianola
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal helpers: whether standard error is a terminal, progress bars, Ctrl-C handling.
enum Terminal {
    static var isInteractive: Bool { isatty(2) == 1 }

    /// The terminal's width in columns (standard error's), else $COLUMNS, else 80.
    static var width: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return columns }
        return 80
    }

    /// `line` cut to fit one terminal line (one column spare, so the cursor never wraps).
    static func fit(_ line: String) -> String {
        let room = max(10, width - 1)
        return line.count <= room ? line : String(line.prefix(room - 1)) + "…"
    }

    /// Set by SIGINT/SIGTERM; long operations poll it and clean up.
    static let interrupted = Atomic<Int32>(0)

    /// Installs handlers that record SIGINT and SIGTERM instead of killing the process, so that
    /// renders can remove their temporary files and exit cleanly.
    static func trapInterrupts() {
        let handler: @convention(c) (Int32) -> Void = { signal in
            Terminal.interrupted.store(signal, ordering: .relaxed)
        }
        // A closed terminal (SIGHUP) ends the command as SIGTERM does: nothing half-written.
        for number in [SIGINT, SIGTERM, SIGHUP] { signal(number, handler) }
        // A parent may have started us with these signals blocked (the mask survives exec).
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether a trapped signal has come: what a blocking read asks while it waits.
    static let isInterrupted: @Sendable () -> Bool = { interruptSignal != nil }

    /// The error for a MIDI file that could not be read: the interrupt's exit code when the read
    /// was cut short by a signal, else one line naming the file.
    static func readFailure(_ path: String, _ error: MIDIFileError) -> any Error {
        if case .interrupted = error { return interruptExitCode }
        return CLIError("\(path): \(Hints.reading(error.description))")
    }

    static var interruptSignal: Int32? {
        let value = interrupted.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// The shell's code for a command ended by the signal received: 128 + its number (130 for
    /// SIGINT, 143 for SIGTERM).
    static var interruptExitCode: ExitCode { ExitCode(128 + (interruptSignal ?? SIGINT)) }

    /// Writes `text` to standard error without a newline (for progress lines).
    static func writeError(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Writes `text` to standard output (buffered with `print`'s output, so the two stay in order).
    static func writeOutput(_ text: String) {
        print(text, terminator: "")
    }

    /// "1:05.3" for 65.3 seconds.
    static func clock(_ seconds: Double) -> String {
        // Clamped: a damaged file's duration can exceed what Int holds.
        let value = seconds.isNaN ? 0 : min(max(0, seconds), 1e15)
        let minutes = Int(value) / 60
        let rest = value - Double(minutes * 60)
        let tenths = Int(rest * 10)
        let secondsText = String(tenths / 10)
        return "\(minutes):\(secondsText.count < 2 ? "0" + secondsText : secondsText).\(tenths % 10)"
    }

    static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
