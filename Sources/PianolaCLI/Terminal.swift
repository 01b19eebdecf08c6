import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal helpers: whether standard error is a terminal, progress bars, Ctrl-C handling.
enum Terminal {
    static var isInteractive: Bool { isatty(2) == 1 }

    /// Set by SIGINT/SIGTERM; long operations poll it and clean up.
    static let interrupted = Atomic<Int32>(0)

    /// Installs handlers that record SIGINT and SIGTERM instead of killing the process, so that
    /// renders can remove their temporary files and exit cleanly.
    static func trapInterrupts() {
        let handler: @convention(c) (Int32) -> Void = { signal in
            Terminal.interrupted.store(signal, ordering: .relaxed)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may have started us with these signals blocked (the mask survives exec).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    static var interruptSignal: Int32? {
        let value = interrupted.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Writes `text` to standard error without a newline (for progress lines).
    static func writeError(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// "1:05.3" for 65.3 seconds.
    static func clock(_ seconds: Double) -> String {
        let value = max(0, seconds)
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

/// A one-line progress bar on a terminal, or a plain line every 10 % otherwise.
struct ProgressReporter {
    let label: String
    let total: Double
    private var lastDecile = -1
    private var lastDraw = 0.0
    private let started = Terminal.monotonicSeconds()

    init(label: String, total: Double) {
        self.label = label
        self.total = max(total, 0.001)
    }

    mutating func update(done: Double, suffix: String = "") {
        let fraction = min(1, max(0, done / total))
        let now = Terminal.monotonicSeconds()
        let speed = done / max(now - started, 1e-6)
        if Terminal.isInteractive {
            guard now - lastDraw > 0.1 || fraction >= 1 else { return }
            lastDraw = now
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let percent = Int(fraction * 100)
            Terminal.writeError(
                "\r\(label) \(bar) \(percent)% \(Terminal.clock(done))/\(Terminal.clock(total)) \(Int(speed))× \(suffix)\u{1B}[K"
            )
        } else {
            let decile = Int(fraction * 10)
            guard decile > lastDecile else { return }
            lastDecile = decile
            Terminal.writeError(
                "\(label): \(decile * 10)% (\(Terminal.clock(done)) of \(Terminal.clock(total)), \(Int(speed))× real time)\n"
            )
        }
    }

    func finish() {
        if Terminal.isInteractive { Terminal.writeError("\r\u{1B}[K") }
    }
}
