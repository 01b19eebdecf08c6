import Pianola

#if canImport(Glibc)
    import Glibc
#endif

/// `pianola record --meter-log FILE`: one JSON line per meter window read, for a pipeline or a
/// later check: `{"endFrame":…,"seconds":…,"rms":[…],"peak":[…],"hold":[…],"clipped":[…]}`
/// (levels in dBFS, −160 for silence). "-" writes to standard output.
final class MeterLog {
    let path: String
    private let descriptor: Int32
    private var lastEndFrame = 0

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

    deinit { if descriptor > 1 { close(descriptor) } }

    /// Writes `reading` unless it is the window already written (or none has completed yet).
    func append(_ reading: PowerMeter.Reading, sampleRate: Double) {
        guard reading.endFrame > lastEndFrame else { return }
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
        if descriptor == 1 {
            Terminal.writeOutput(line)
        } else {
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// Removes the log (the recording it belonged to could not start).
    func delete() { if descriptor > 1 { unlink(path) } }
}
