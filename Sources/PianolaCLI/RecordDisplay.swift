import Pianola

#if canImport(Glibc)
    import Glibc
#endif

/// What `pianola record` shows while recording: meters and a status line on a terminal (redrawn
/// in place; a plain line every 10 seconds when standard input is no terminal), nothing into a
/// pipe or a file; and the summary at the end.
struct RecordDisplay {
    enum Ending { case finished, quit, interrupted, failed }

    let recorder: AudioRecorder
    let quiet: Bool
    /// Keys come from standard input even when it is not a terminal (`--interactive`).
    var interactive = false
    /// Every meter window read is logged here (`--meter-log`).
    var meterLog: MeterLog?

    /// Shows the recording until it ends by itself (`untilFinished`: --duration), `q`, a signal or a failure.
    func follow(until untilFinished: Bool) -> Ending {
        let keys = interactive || (Terminal.isInteractive && isatty(0) == 1) ? KeyReader() : nil
        let drawn = Terminal.isInteractive && isatty(0) == 1 && !quiet
        var linesDrawn = 0
        var lastLine = Terminal.monotonicSeconds()
        defer {
            meterLog?.append(recorder.meterReading(), sampleRate: recorder.sampleRate)
            keys?.restore()
            if drawn { Terminal.writeError(String(repeating: "\u{1B}[A", count: linesDrawn) + "\r\u{1B}[J") }
        }
        while true {
            if Terminal.interruptSignal != nil { return .interrupted }
            if recorder.failure != nil { return .failed }
            if untilFinished && !recorder.isRecording && recorder.tap.isStopped { return .finished }
            meterLog?.append(recorder.meterReading(), sampleRate: recorder.sampleRate)
            // Each look takes the devices' accounts once more (the measured latency steadies).
            let latency = recorder.measuredMonitorLatency
            switch keys?.read() {
            case .quit: return .quit
            case .space: recorder.isRecording ? recorder.pause() : recorder.resume()
            case .clear: recorder.meter.clearClips()
            default: break
            }
            if drawn {
                let lines =
                    Self.meterLines(recorder.meterReading(), width: Terminal.width) + [statusLine(latency: latency)]
                Terminal.writeError(
                    String(repeating: "\u{1B}[A", count: linesDrawn) + "\r"
                        + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\n")
                linesDrawn = lines.count
            } else if !quiet, Terminal.isInteractive, Terminal.monotonicSeconds() - lastLine >= 10 {
                lastLine = Terminal.monotonicSeconds()
                Terminal.writeError(statusLine(latency: latency) + "\n")
            }
            // 20 meter frames a second on a terminal or into a log; otherwise a look four times a
            // second is enough.
            usleep(drawn || meterLog != nil ? 50_000 : 250_000)
        }
    }

    /// "0:12.3 recorded  1.2 MB  0 overruns" (and what else went wrong; with a monitor, its
    /// underruns and the `latency` measured, in seconds).
    func statusLine(latency: Double? = nil) -> String {
        var parts = [
            "\(Terminal.clock(recorder.currentTime)) \(recorder.isRecording ? "recorded" : "paused")",
            Self.megabytes(recorder.tap.fileSize), counted(recorder.overrunCount, "overrun"),
        ]
        if recorder.droppedFrameCount > 0 {
            parts.append(counted(recorder.droppedFrameCount, "frame") + " lost (disk too slow)")
        }
        if recorder.monitorOutput != nil {
            parts.append(counted(recorder.underrunCount, "monitor underrun"))
            if let latency { parts.append("monitor \(String(format1: latency * 1000)) ms") }
        }
        if recorder.files.count > 1 { parts.append("file \(recorder.files.count)") }
        let peak = recorder.meterReading().maximumPeakPower.max() ?? PowerMeter.floor
        parts.append("peak \(String(format1: Double(peak))) dB")
        return Terminal.fit(parts.joined(separator: "  "))
    }

    /// One line per channel: "1 ████████▒▒▒··|···· -18.2 rms  -9.1 pk  -6.0 hold  CLIP".
    static func meterLines(_ reading: PowerMeter.Reading, width: Int) -> [String] {
        let barWidth = max(10, min(60, width - 44))
        return reading.averagePower.indices.map { channel in
            let position = { (decibels: Float) -> Int in
                // -60 dB … 0 dB across the bar.
                Int(((max(-60, min(0, decibels)) + 60) / 60 * Float(barWidth)).rounded())
            }
            let rms = position(reading.averagePower[channel])
            let peak = max(rms, position(reading.peakPower[channel]))
            let hold = position(reading.peakHoldPower[channel])
            var bar = Array(repeating: "·", count: barWidth)
            for index in 0..<barWidth {
                if index < rms {
                    bar[index] = "█"
                } else if index < peak {
                    bar[index] = "▒"
                }
            }
            if hold > 0 { bar[min(hold, barWidth) - 1] = "|" }
            let level = { (decibels: Float) -> String in
                fitted(decibels <= -159 ? "-inf" : String(format1: Double(decibels)), width: 6)
            }
            return "\(channel + 1) \(bar.joined()) \(level(reading.averagePower[channel])) rms "
                + "\(level(reading.peakPower[channel])) pk \(level(reading.peakHoldPower[channel])) hold"
                + (reading.clipped[channel] ? "  CLIP" : "")
        }
    }

    static func megabytes(_ bytes: Int) -> String { "\(String(format1: Double(bytes) / 1_000_000)) MB" }

    /// The closing lines: what was written, and what went wrong.
    func summarize(failure: SessionError?, measuredLatency: Double?) {
        guard !quiet else { return }
        let files = recorder.files
        let names =
            files.count == 1 ? files[0] : "\(counted(files.count, "file")) (\(files.first ?? "")…\(files.last ?? ""))"
        Terminal.writeError(
            "Recorded \(Terminal.clock(recorder.currentTime)) to \(names), \(Self.megabytes(recorder.tap.fileSize)); "
                + "\(counted(recorder.overrunCount, "overrun")), \(counted(recorder.droppedFrameCount, "frame")) lost\n"
        )
        if let measured = measuredLatency {
            Terminal.writeError(
                "Monitor latency: \(String(format1: measured * 1000)) ms by the devices' own accounts\n")
        }
        if failure != nil { Terminal.writeError("note: the file holds everything recorded before the error\n") }
        if let line = meterLog?.failureLine { Terminal.writeError("note: \(line)\n") }
    }

    /// The JSON summary (`--json`).
    static func summary(_ recorder: AudioRecorder, measuredLatency: Double?, meterLog: MeterLog? = nil) -> JSONValue {
        let reading = recorder.meterReading()
        let log: JSONValue =
            meterLog.map {
                .object([
                    "path": .string($0.path), "windows": .number(Double($0.windowCount)),
                    "failure": $0.failure.map { .string($0) } ?? .null,
                ])
            } ?? .null
        return .object([
            "meterLog": log,
            "files": .array(recorder.files.map { .string($0) }),
            "seconds": .number(recorder.currentTime),
            "frames": .number(Double(recorder.tap.writtenFrameCount)),
            "sampleRate": .number(recorder.sampleRate),
            "fileSampleRate": .number(recorder.tap.fileSampleRate),
            "channels": .number(Double(recorder.channelCount)),
            "overruns": .number(Double(recorder.overrunCount)),
            "underruns": .number(Double(recorder.underrunCount)),
            "droppedFrames": .number(Double(recorder.droppedFrameCount)),
            "peakDecibels": .array(reading.maximumPeakPower.map { .number(Double($0)) }),
            "clipped": .array(reading.clipped.map { .bool($0) }),
            "failure": recorder.failure.map { .string($0.description) } ?? .null,
            "monitorLatencyMs": recorder.monitorLatency.map { .number($0 * 1000) } ?? .null,
            "measuredMonitorLatencyMs": measuredLatency.map { .number($0 * 1000) } ?? .null,
        ])
    }
}
