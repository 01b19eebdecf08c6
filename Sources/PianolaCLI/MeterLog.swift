import Pianola

#if canImport(Glibc)
    import Glibc
#endif

/// `pianola record --meter-log FILE`: one JSON line per meter window read, for a pipeline or a
/// later check: `{"endFrame":…,"seconds":…,"rms":[…],"peak":[…],"hold":[…],"clipped":[…]}`
/// (levels in dBFS, −160 for silence). "-" writes to standard output.
///
/// Every write is checked: a short one is continued, a failed one (a full disk, a closed pipe)
/// stops the log, said once on standard error at once and kept for the summary (`failure`), as
/// is a failed close.
final class MeterLog {
    let path: String
    private let descriptor: Int32
    private var lastEndFrame = 0
    private var isClosed = false
    /// The windows written whole.
    private(set) var windowCount = 0
    /// Why the log stopped short (its first failed write, or its close), nil while it is whole.
    private(set) var failure: String?

    /// Creates the log (never over an existing file unless `overwrite`).
    init(path: String, overwrite: Bool) throws(CLIError) {
        self.path = path
        if path == "-" {
            descriptor = 1
            return
        }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL)
        descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else {
            let reason =
                errno == EEXIST ? "the file exists (use --force to replace it)" : String(cString: strerror(errno))
            throw CLIError("\(path): cannot open: \(reason)")
        }
    }

    deinit { if !isClosed && descriptor > 1 { close(descriptor) } }

    /// The log as messages name it.
    var name: String { path == "-" ? "standard output" : path }

    /// Writes `reading` unless it is the window already written (or none has completed yet), or
    /// the log has stopped.
    func append(_ reading: PowerMeter.Reading, sampleRate: Double) {
        guard failure == nil, !isClosed, reading.endFrame > lastEndFrame else { return }
        lastEndFrame = reading.endFrame
        let numbers = { (values: [Float]) in JSONValue.array(values.map { .number(Double($0)) }) }
        let line =
            JSONValue.object([
                "endFrame": .number(Double(reading.endFrame)),
                "seconds": .number(Double(reading.endFrame) / sampleRate),
                "rms": numbers(reading.averagePower),
                "peak": numbers(reading.peakPower),
                "hold": numbers(reading.peakHoldPower),
                "clipped": .array(reading.clipped.map { .bool($0) }),
            ]).serialized() + "\n"
        // Standard output: what `print` holds goes first, so the two stay in order.
        if descriptor == 1 { fflush(nil) }
        if let reason = Self.write(Array(line.utf8), to: descriptor) {
            stop("cannot write: \(reason)")
        } else {
            windowCount += 1
        }
    }

    /// Closes the log (checked) and returns why it is not whole, if it is not.
    @discardableResult
    func finish() -> String? {
        guard !isClosed else { return failure }
        isClosed = true
        if descriptor > 1 && close(descriptor) != 0 && failure == nil {
            stop("cannot close: \(String(cString: strerror(errno)))")
        }
        return failure
    }

    /// Removes the log (the recording it belonged to could not start).
    func delete() {
        guard descriptor > 1 else { return }
        finish()
        unlink(path)
    }

    /// The line for the summary when the log stopped short: "the meter log levels.jsonl stopped
    /// after 12 windows: cannot write: No space left on device".
    var failureLine: String? {
        failure.map { "the meter log \(name) stopped after \(counted(windowCount, "window")): \($0)" }
    }

    /// The log stops at its first failure, said once.
    private func stop(_ reason: String) {
        failure = reason
        Terminal.writeError("pianola: meter log \(name): \(reason); no more windows are logged\n")
    }

    /// Writes all of `bytes`, continuing after a short write; why not, if it could not.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        var sent = 0
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                // Not empty while bytes remain, so it has an address; 0 would say nothing was written.
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + sent, buffer.count - sent)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            guard written > 0 else { return "nothing was written" }
            sent += written
        }
        return nil
    }
}
