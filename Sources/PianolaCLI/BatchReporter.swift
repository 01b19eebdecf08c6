import Pianola

#if canImport(Glibc)
    import Glibc
#endif

/// Prints what a batch render does, in one of the three ways `render` shows it. Progress goes
/// to standard error, and only when it is a terminal: a pipe or a file gets the summaries alone.
struct BatchReporter {
    enum Style {
        /// One file at a time: a progress bar, then its summary line.
        case oneAtATime
        /// Several at once: each file's summary line as it finishes, under a "[k/N] done" line.
        case numbered
        /// A corpus: one progress line for the batch (files/s, audio-s/s, ETA); failures by origin.
        case corpus
    }

    let style: Style
    let quiet: Bool
    /// JSON Lines on standard output, one object per output, instead of the summary lines.
    var json = false
    /// Set when a failure could not be written to the failure log: the last line does not point there.
    private(set) var failuresNotLogged = false
    /// The SoundFonts of the batch, for the JSON objects.
    var soundFonts: [String] = []
    /// The temporary file that stands in for standard output (`-o -`): shown as "standard output",
    /// and the summary goes to standard error, which is then the only text the command prints.
    var standardOutputStandIn: String?
    private var progress: ProgressReporter?
    private var progressJob: BatchJob?
    /// Whether the "[k/N] done" line of `numbered` is on the terminal.
    private var countShown = false
    /// Whether a job's interruption was shown ("… was not written").
    private(set) var reportedCancellation = false

    init(style: Style, quiet: Bool) {
        self.style = style
        self.quiet = quiet
    }

    mutating func show(_ event: BatchEvent) {
        if case .progress = event {} else { clearCount() }
        switch event {
        case .progress(let job, let rendered, let music):
            if progressJob != job {
                progress = ProgressReporter(label: fileName(job.input), total: music)
                progressJob = job
            }
            progress?.update(done: rendered)
        case .defectsRecovered(let job, let count):
            guard style != .corpus, !quiet else { return }
            Terminal.writeError(
                "warning: \(job.input): \(counted(count, "defect")) recovered (pianola info \(job.input) lists them)\n")
        case .defectGapsCut(let job, let cuts):
            guard !quiet else { return }
            endProgress()
            for cut in cuts {
                Terminal.writeError(
                    "warning: \(job.input): cut \(Self.clock(cut.seconds)) of silence that a damaged delta time made "
                        + "(track \(cut.gap.track), tick \(cut.gap.tick): hugeDeltaTime; pianola info lists it)\n")
            }
        case .loudnessOutOfReach(let job, let target, let measured):
            guard style != .corpus else { return }
            endProgress()
            Terminal.writeError(
                "warning: \(job.output): \(String(format1: target.integrated)) LUFS is out of reach under "
                    + "\(String(format1: target.truePeakCeiling)) dBTP; got \(String(format1: measured)) LUFS\n")
        case .finished(let job, let outcome, let counts):
            endProgress()
            if json {
                print(Self.json(job, outcome, soundFonts: job.soundFont.map { [$0] } ?? soundFonts).serialized())
            }
            if case .rendered(let summary, _) = outcome {
                // Presets that played silent: shown in every style, a render that sounds wrong.
                Self.warnIfSilent(summary)
                if style != .corpus { Self.warnIfClipped(shown(summary)) }
            }
            if style == .corpus {
                showCorpus(job, outcome, counts)
            } else {
                showFile(job, outcome, counts)
                showCount(counts)
            }
        case .failureNotLogged(let error):
            failuresNotLogged = true
            printError("pianola: the failure log: \(error)")
        case .ledgerNotWritten(let job, let error):
            endProgress()
            Terminal.writeError(
                "warning: \(job.output): rendered, but not recorded in the ledger (the next run renders it again): "
                    + "\(error)\n")
        }
    }

    /// `summary` as the user sees it: the stand-in for standard output named as such.
    private func shown(_ summary: RenderSummary) -> RenderSummary {
        var shown = summary
        if summary.outputPath == standardOutputStandIn { shown.outputPath = "standard output" }
        return shown
    }

    private mutating func endProgress() {
        progress?.finish()
        progress = nil
        progressJob = nil
    }

    /// The "[k/N] done" line of a batch rendered several at once, on a terminal, until the last.
    private mutating func showCount(_ counts: BatchSummary) {
        guard style == .numbered, !quiet, Terminal.isInteractive, counts.finished < counts.total else { return }
        Terminal.writeError("\r[\(counts.finished)/\(counts.total)] done\u{1B}[K")
        countShown = true
    }

    private mutating func clearCount() {
        guard countShown else { return }
        Terminal.writeError("\r\u{1B}[K")
        countShown = false
    }

    /// Clears what the batch left on the terminal (an interrupted one's "[k/N] done" line).
    mutating func finish() {
        endProgress()
        clearCount()
    }

    private mutating func showFile(_ job: BatchJob, _ outcome: BatchOutcome, _ counts: BatchSummary) {
        switch outcome {
        case .rendered(let summary, let elapsed):
            guard !quiet, !json else { return }
            let line = Self.summaryLine(shown(summary), elapsed: elapsed)
            if standardOutputStandIn == nil { print(line) } else { Terminal.writeError(line + "\n") }
        case .failed(let reason):
            printError("pianola: \(Self.place(job)): \(Hints.job(reason))")
        case .cancelled:
            reportedCancellation = true
            let what = job.output == standardOutputStandIn ? "standard output" : job.output
            printError("pianola: interrupted; \(what) was not written")
        case .skipped:
            break
        }
    }

    /// A corpus job's end: its failure, and on a terminal the batch's progress line (a pipe or a
    /// file gets the failures and the last line only).
    private func showCorpus(_ job: BatchJob, _ outcome: BatchOutcome, _ counts: BatchSummary) {
        if case .failed(let reason) = outcome {
            if Terminal.isInteractive { Terminal.writeError("\r\u{1B}[K") }
            printError("pianola: \(Self.place(job)): \(Hints.job(reason))")
        }
        guard !quiet, Terminal.isInteractive else { return }
        let elapsed = max(counts.elapsedSeconds, 1e-3)
        let filesPerSecond = Double(counts.rendered + counts.failed) / elapsed
        let eta = filesPerSecond > 0 ? Terminal.clock(Double(counts.total - counts.finished) / filesPerSecond) : "?"
        let width = 24
        let filled = counts.total > 0 ? counts.finished * width / counts.total : width
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let line =
            "\(bar) [\(counts.finished)/\(counts.total)] \(String(format1: filesPerSecond)) files/s, "
            + "\(String(format1: counts.audioSeconds / elapsed)) audio-s/s, ETA \(eta)"
        Terminal.writeError("\r\(line)\u{1B}[K")
    }

    /// The corpus's last line: counts, audio, speed, where the failures are.
    func finishCorpus(_ summary: BatchSummary, failures: String) {
        guard !quiet else { return }
        if Terminal.isInteractive { Terminal.writeError("\n") }
        let speed = String(format1: summary.audioSeconds / max(summary.elapsedSeconds, 1e-6))
        let counts = "\(summary.rendered) rendered, \(summary.skipped) already done, \(summary.failed) failed"
        let audio =
            "\(Terminal.clock(summary.audioSeconds)) of audio in \(Terminal.clock(summary.elapsedSeconds)), \(speed)× real time"
        let where_ =
            summary.failed == 0
            ? ""
            : failuresNotLogged ? "; the failure log \(failures) could not be written" : "; failures in \(failures)"
        Terminal.writeError("\(counts) (\(counted(summary.total, "job"))): \(audio)\(where_)\n")
    }

    /// The job's origin and input, for messages ("corpus.jsonl:3 (a.mid)", or just the input).
    static func place(_ job: BatchJob) -> String {
        job.origin == job.input ? job.input : job.origin + " (" + job.input + ")"
    }

    /// "song.wav: 1:05.3 (1:02.0 music + 3.3 s tail), peak -3.1 dBFS, -18.2 LUFS, 120× real time".
    static func summaryLine(_ summary: RenderSummary, elapsed: Double) -> String {
        let loudness =
            (summary.loudness.map { ", \(String(format1: $0)) LUFS" } ?? "")
            + (summary.truePeak.map { ", \(String(format1: $0)) dBTP" } ?? "")
        let length =
            "\(Terminal.clock(summary.seconds)) (\(Terminal.clock(summary.musicSeconds)) music + "
            + "\(String(format1: summary.tailSeconds)) s tail)"
        return
            "\(summary.outputPath): \(length), peak \(String(decibels: summary.peak)) dBFS\(loudness), "
            + "\(Int(summary.seconds / max(elapsed, 1e-6)))× real time"
    }

    /// "warning: FONT: bank B, program P (NAME): N samples cannot be read or decoded …", one line
    /// for each preset that played samples silent.
    static func warnIfSilent(_ summary: RenderSummary) {
        for warning in summary.warnings { Terminal.writeError("warning: \(warning)\n") }
    }

    /// "warning: OUT: N samples clipped …: use --gain or --loudness", when the output went over
    /// full scale.
    static func warnIfClipped(_ summary: RenderSummary) {
        let count = summary.samplesOverFullScale
        guard count > 0 else { return }
        let what =
            summary.encoding == .f32
            ? "\(counted(count, "sample")) above 0 dBFS (they clip wherever the file is turned into integers)"
            : "\(counted(count, "sample")) clipped"
        Terminal.writeError(
            "warning: \(summary.outputPath): \(what), peak \(String(decibels: summary.peak)) dBFS: use --gain or --loudness\n"
        )
    }

    /// One output as a JSON object, for `render --json`.
    static func json(_ job: BatchJob, _ outcome: BatchOutcome, soundFonts: [String]) -> JSONValue {
        var object: [String: JSONValue] = ["input": .string(job.input), "output": .string(job.output)]
        func decibels(_ value: Double?) -> JSONValue {
            guard let value, value.isFinite else { return .null }
            return .number((value * 100).rounded() / 100)
        }
        func seconds(_ value: Double) -> JSONValue { .number((value * 1000).rounded() / 1000) }
        switch outcome {
        case .rendered(let summary, let elapsed):
            object["status"] = .string("rendered")
            object["seconds"] = seconds(summary.seconds)
            object["musicSeconds"] = seconds(summary.musicSeconds)
            object["tailSeconds"] = seconds(summary.tailSeconds)
            object["sampleRate"] = .number(Double(summary.sampleRate))
            object["format"] = .string(summary.encoding.rawValue)
            object["peakDecibels"] = decibels(summary.peak > 0 ? 20 * log10(Double(summary.peak)) : nil)
            object["loudness"] = decibels(summary.loudness)
            object["truePeak"] = decibels(summary.truePeak)
            object["samplesOverFullScale"] = .number(Double(summary.samplesOverFullScale))
            if !summary.warnings.isEmpty { object["warnings"] = .array(summary.warnings.map(JSONValue.string)) }
            object.merge(SoundFontOptions.json(soundFonts)) { $1 }
            object["elapsedSeconds"] = seconds(elapsed)
            // The process's peak resident memory so far (Linux counts ru_maxrss in kilobytes).
            var usage = rusage()
            if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 {
                object["peakMemoryMegabytes"] = .number((Double(usage.ru_maxrss) / 102.4).rounded() / 10)
            }
        case .skipped:
            object["status"] = .string("skipped")
        case .failed(let reason):
            object["status"] = .string("failed")
            object["origin"] = .string(job.origin)
            object["error"] = .string(reason)
        case .cancelled:
            object["status"] = .string("cancelled")
        }
        return .object(object)
    }

    /// H:MM:SS (or M:SS).
    static func clock(_ seconds: Double) -> String {
        let total = Int(min(max(0, seconds), 1e12).rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }
}
