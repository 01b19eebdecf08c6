/// A one-line progress bar on a terminal (standard error); nothing otherwise: a pipe or a file
/// gets only the summary. The position shown never passes the total: what comes after (a
/// render's release and reverb tail) shows as "+ tail". It redraws at most ten times a second.
struct ProgressReporter {
    let label: String
    let total: Double
    private var lastDraw = -1.0
    private let started = Terminal.monotonicSeconds()

    init(label: String, total: Double) {
        self.label = label
        self.total = max(total, 0.001)
    }

    mutating func update(done: Double) {
        guard Terminal.isInteractive else { return }
        let fraction = min(1, max(0, done / total))
        let now = Terminal.monotonicSeconds()
        let speed = done / max(now - started, 1e-6)
        guard now - lastDraw >= 0.1 else { return }
        lastDraw = now
        let position = "\(Terminal.clock(min(done, total)))/\(Terminal.clock(total))"
        let tail = done > total ? " + tail \(String(format1: done - total)) s" : ""
        // (The speed means something once the work has run a little.)
        let speedText = now - started >= 0.1 ? " \(Int(speed))×" : ""
        let figures = "\(Int(fraction * 100))% \(position)\(tail)\(speedText)"
        // The bar takes what the terminal leaves, up to 30 columns.
        let width = max(5, min(30, Terminal.width - 3 - label.count - figures.count))
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        Terminal.writeError("\r" + Terminal.fit("\(label) \(bar) \(figures)") + "\u{1B}[K")
    }

    func finish() {
        if Terminal.isInteractive { Terminal.writeError("\r\u{1B}[K") }
    }
}
