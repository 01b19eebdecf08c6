import Foundation
import Pianola
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One render of a corpus job: a MIDI file, where its audio goes, and what differs from the
/// command line's settings.
struct CorpusJob: Sendable {
    var input: String
    var output: String
    /// A SoundFont for this job only (else the command's).
    var soundfont: String?
    var rate: Int?
    var format: String?
    var gain: Double?
    var tail: String?
    /// Integrated loudness target (LUFS) and true-peak ceiling (dBTP).
    var loudness: Double?
    var truePeak: Double?
    /// Where the job came from, for messages ("corpus.jsonl:12", or the input path).
    var origin: String
}

/// A job that could not even be described (a manifest line that is not valid).
struct CorpusJobProblem: Sendable {
    var origin: String
    var input: String
    var output: String
    var reason: String
}

/// Reads corpus jobs from a manifest (JSON Lines) or a folder tree.
enum CorpusPlan {
    /// The keys a manifest line may have.
    static let manifestKeys: Set<String> = [
        "input", "output", "soundfont", "rate", "format", "gain", "tail", "loudness", "truePeak",
    ]

    /// One job per non-empty line: `{"input": "a.mid", "output": "a.wav", "soundfont": "x.sf2",
    /// "rate": 48000, "format": "s24", "gain": -3, "tail": "auto"}`; relative paths are relative
    /// to the manifest's folder. A line that is not valid becomes a problem (it fails its job, not
    /// the batch).
    static func manifest(at path: String) throws(CLIError) -> (jobs: [CorpusJob], problems: [CorpusJobProblem]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("manifest \(path): cannot read it (\(String(cString: strerror(errno))))")
        }
        let base = (path as NSString).deletingLastPathComponent
        func resolve(_ value: String) -> String {
            value.hasPrefix("/") || base.isEmpty ? value : base + "/" + value
        }
        var jobs: [CorpusJob] = []
        var problems: [CorpusJobProblem] = []
        var outputs: [String: Int] = [:]
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let origin = "\(path):\(index + 1)"
            func problem(_ reason: String, input: String = "", output: String = "") {
                problems.append(CorpusJobProblem(origin: origin, input: input, output: output, reason: reason))
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                problem("not a JSON object")
                continue
            }
            let input = object["input"] as? String
            let output = object["output"] as? String
            guard let input, !input.isEmpty, let output, !output.isEmpty else {
                problem("needs \"input\" and \"output\" strings", input: input ?? "", output: output ?? "")
                continue
            }
            if let unknown = Set(object.keys).subtracting(manifestKeys).sorted().first {
                problem(
                    "unknown key \"\(unknown)\" (keys: \(manifestKeys.sorted().joined(separator: ", ")))",
                    input: resolve(input), output: resolve(output))
                continue
            }
            if let first = outputs[resolve(output)] {
                problem("its output is line \(first)'s output too", input: resolve(input), output: resolve(output))
                continue
            }
            outputs[resolve(output)] = index + 1
            var job = CorpusJob(input: resolve(input), output: resolve(output), origin: origin)
            job.soundfont = (object["soundfont"] as? String).map(resolve)
            job.rate = (object["rate"] as? NSNumber)?.intValue
            job.format = object["format"] as? String
            job.gain = (object["gain"] as? NSNumber)?.doubleValue
            job.loudness = (object["loudness"] as? NSNumber)?.doubleValue
            job.truePeak = (object["truePeak"] as? NSNumber)?.doubleValue
            if let tail = object["tail"] {
                job.tail = (tail as? String) ?? (tail as? NSNumber).map { "\($0.doubleValue)" }
            }
            jobs.append(job)
        }
        return (jobs, problems)
    }

    /// The MIDI files under `folder` (.mid, .midi, .kar, .rmi, .smf, recursively, sorted), each
    /// rendered to the same relative path under `output` with the extension `ext`.
    static func folder(_ folder: String, output: String, ext: String) -> [CorpusJob] {
        let root = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let outputRoot = output.hasSuffix("/") ? String(output.dropLast()) : output
        let extensions: Set<String> = ["mid", "midi", "kar", "rmi", "smf"]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var relatives: [String] = []
        while let next = walker.nextObject() as? String {
            if extensions.contains((next as NSString).pathExtension.lowercased()) { relatives.append(next) }
        }
        var used: Set<String> = []
        return relatives.sorted().map { relative in
            // song.mid and song.kar side by side would both become song.EXT: the second gets a suffix.
            let stem = (relative as NSString).deletingPathExtension
            var output = outputRoot + "/" + stem + "." + ext
            var counter = 2
            while used.contains(output) {
                output = outputRoot + "/" + stem + "-\(counter)." + ext
                counter += 1
            }
            used.insert(output)
            return CorpusJob(input: root + "/" + relative, output: output, origin: relative)
        }
    }
}

/// What an output was rendered from: recorded when it is complete, compared on the next run.
struct CorpusFingerprint: Equatable, Sendable {
    var inputSHA256: String
    /// The SoundFont's path, size and modification time (hashing a 150 MB bank on every run
    /// would cost more than many renders).
    var soundfont: String
    var options: String
}

/// The ledger of finished jobs: one JSON line per output, appended (with a single `write`) once
/// the output has its final name. A job whose output is recorded with the same fingerprint, and
/// still has the recorded size, is skipped; a half-written output is never recorded (renders go
/// to a temporary name first), and a line cut short by a crash is ignored.
final class CorpusLedger: Sendable {
    let path: String
    private let records: Mutex<[String: (CorpusFingerprint, Int)]>

    init(path: String) {
        self.path = path
        var loaded: [String: (CorpusFingerprint, Int)] = [:]
        if let data = FileManager.default.contents(atPath: path) {
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let output = object["output"] as? String, let input = object["inputSHA256"] as? String,
                    let font = object["soundfont"] as? String, let options = object["options"] as? String,
                    let bytes = (object["bytes"] as? NSNumber)?.intValue
                else { continue }
                loaded[output] = (CorpusFingerprint(inputSHA256: input, soundfont: font, options: options), bytes)
            }
        }
        records = Mutex(loaded)
    }

    /// How many outputs are recorded.
    var count: Int { records.withLock { $0.count } }

    /// Whether `output` is recorded as rendered from `fingerprint` and is still there, whole.
    func isDone(_ output: String, _ fingerprint: CorpusFingerprint) -> Bool {
        guard let (recorded, bytes) = records.withLock({ $0[CorpusLedger.key(output)] }), recorded == fingerprint
        else { return false }
        var info = stat()
        return stat(output, &info) == 0 && Int(info.st_size) == bytes
    }

    /// Records a finished output.
    func record(_ output: String, _ fingerprint: CorpusFingerprint, input: String, seconds: Double) throws(CLIError) {
        var info = stat()
        guard stat(output, &info) == 0 else { throw CLIError("\(output): vanished after rendering") }
        let key = Self.key(output)
        let line: JSONValue = .object([
            "output": .string(key), "input": .string(input), "inputSHA256": .string(fingerprint.inputSHA256),
            "soundfont": .string(fingerprint.soundfont), "options": .string(fingerprint.options),
            "bytes": .number(Double(info.st_size)), "seconds": .number((seconds * 1_000).rounded() / 1_000),
            "finished": .string(ISO8601DateFormatter().string(from: Date())),
        ])
        try CorpusLedger.append(line.serialized() + "\n", to: path)
        records.withLock { $0[key] = (fingerprint, Int(info.st_size)) }
    }

    /// Appends `text` with one `write` on a descriptor opened for appending: lines from several
    /// processes (a cluster's workers on a shared folder) do not interleave.
    static func append(_ text: String, to path: String) throws(CLIError) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CLIError("\(path): cannot open (\(String(cString: strerror(errno))))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw CLIError("\(path): cannot write (\(String(cString: strerror(errno))))")
        }
    }

    /// Outputs are recorded by absolute path.
    static func key(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}

/// Runs corpus jobs on worker threads that share one loaded copy of each SoundFont.
final class CorpusRunner: Sendable {
    struct Summary {
        var rendered = 0
        var skipped = 0
        var failed = 0
        var audioSeconds = 0.0
        var cancelled = false
    }

    private struct State {
        var pending: [CorpusJob]
        var summary = Summary()
        var finished = 0
    }

    private let total: Int
    private let state: Mutex<State>
    private let fonts = Mutex<[String: OfflineRenderer]>([:])
    private let defaultFont: String
    private let baseOptions: RenderOptions
    private let baseOptionsText: String
    private let ledger: CorpusLedger?
    private let failuresPath: String?
    private let quiet: Bool
    private let started = Terminal.monotonicSeconds()

    init(
        jobs: [CorpusJob], defaultFont: String, options: RenderOptions, optionsText: String, ledger: CorpusLedger?,
        failuresPath: String?, quiet: Bool
    ) {
        total = jobs.count
        // Longest first (by file size, a fair proxy for duration): the last files to finish are
        // short ones, so no thread sits idle at the end while one long song renders alone.
        func size(_ job: CorpusJob) -> Int {
            var info = stat()
            return stat(job.input, &info) == 0 ? Int(info.st_size) : 0
        }
        let sizes = jobs.map(size)
        let order = jobs.indices.sorted { sizes[$0] < sizes[$1] || (sizes[$0] == sizes[$1] && $0 > $1) }
        state = Mutex(State(pending: order.map { jobs[$0] }))
        self.defaultFont = defaultFont
        baseOptions = options
        baseOptionsText = optionsText
        self.ledger = ledger
        self.failuresPath = failuresPath
        self.quiet = quiet
    }

    /// Records a job that failed before it could run (a bad manifest line).
    func fail(_ problem: CorpusJobProblem) {
        report(failure: problem.reason, input: problem.input, output: problem.output, origin: problem.origin)
        state.withLock { $0.summary.failed += 1 }
    }

    /// Runs every job on `workers` threads; returns when all are done (or the run is interrupted).
    func run(workers: Int) -> Summary {
        let group = DispatchGroup()
        for _ in 0..<max(1, min(workers, total)) {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                while let job = next() { perform(job) }
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()
        if !quiet && Terminal.isInteractive { Terminal.writeError("\n") }
        return state.withLock { $0.summary }
    }

    private func next() -> CorpusJob? {
        state.withLock { state in
            if Terminal.interruptSignal != nil {
                state.summary.cancelled = true
                return nil
            }
            return state.pending.popLast()
        }
    }

    private func perform(_ job: CorpusJob) {
        let font = job.soundfont ?? defaultFont
        let options: RenderOptions
        let optionsText: String
        let inputBytes: [UInt8]
        do throws(CLIError) {
            (options, optionsText) = try jobOptions(job)
            do { inputBytes = try MIDIFile.readBytes(path: job.input) } catch { throw CLIError(error.description) }
        } catch {
            return finish(job, .failed(error.description))
        }
        let fingerprint = CorpusFingerprint(
            inputSHA256: SHA256.hex(inputBytes), soundfont: Self.identity(ofFont: font), options: optionsText)
        if let ledger, ledger.isDone(job.output, fingerprint) { return finish(job, .skipped) }
        let renderer: OfflineRenderer
        do { renderer = try self.renderer(font: font, options: options) } catch {
            return finish(job, .failed("\(error)"))
        }
        Self.removeStaleTemporaries(of: job.output)
        let folder = (job.output as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let file: MIDIFile
        do { file = try MIDIFile.read(bytes: inputBytes).file } catch {
            return finish(job, .failed(error.description))
        }
        do {
            let summary = try renderer.render(file, to: job.output) { _, _ in Terminal.interruptSignal == nil }
            try ledger?.record(job.output, fingerprint, input: job.input, seconds: summary.seconds)
            finish(job, .rendered(summary.seconds))
        } catch let error as RenderError {
            if case .cancelled = error { return finish(job, .cancelled) }
            finish(job, .failed(error.description))
        } catch {
            finish(job, .failed("\(error)"))
        }
    }

    private enum Outcome {
        case rendered(Double)
        case skipped
        case failed(String)
        case cancelled
    }

    private func finish(_ job: CorpusJob, _ outcome: Outcome) {
        if case .failed(let reason) = outcome {
            report(failure: reason, input: job.input, output: job.output, origin: job.origin)
        }
        let line: String? = state.withLock { state in
            state.finished += 1
            switch outcome {
            case .rendered(let seconds):
                state.summary.rendered += 1
                state.summary.audioSeconds += seconds
            case .skipped: state.summary.skipped += 1
            case .failed: state.summary.failed += 1
            case .cancelled: state.summary.cancelled = true
            }
            guard !quiet else { return nil }
            let elapsed = max(Terminal.monotonicSeconds() - started, 1e-3)
            let worked = state.summary.rendered + state.summary.failed
            let filesPerSecond = Double(worked) / elapsed
            let remaining = total - state.finished
            let eta = filesPerSecond > 0 ? Terminal.clock(Double(remaining) / filesPerSecond) : "?"
            let width = 24
            let filled = total > 0 ? state.finished * width / total : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            return "\(bar) [\(state.finished)/\(total)] \(String(format1: filesPerSecond)) files/s, "
                + "\(String(format1: state.summary.audioSeconds / elapsed)) audio-s/s, ETA \(eta)"
        }
        guard let line else { return }
        if Terminal.isInteractive {
            Terminal.writeError("\r\(line)\u{1B}[K")
        } else if case .failed = outcome {
        } else {
            let note = if case .skipped = outcome { " (already done)" } else { "" }
            Terminal.writeError(line + "  " + job.output + note + "\n")
        }
    }

    private func report(failure reason: String, input: String, output: String, origin: String) {
        let message = "pianola: \(origin == input ? input : origin + " (" + input + ")"): \(reason)"
        if Terminal.isInteractive { Terminal.writeError("\r\u{1B}[K") }
        Terminal.writeError(message + "\n")
        guard let failuresPath else { return }
        let line: JSONValue = .object([
            "input": .string(input), "output": .string(output), "origin": .string(origin), "error": .string(reason),
        ])
        do { try CorpusLedger.append(line.serialized() + "\n", to: failuresPath) } catch {
            Terminal.writeError("pianola: \(error.description)\n")
        }
    }

    /// The command's options with the job's own settings, and their text for the ledger.
    private func jobOptions(_ job: CorpusJob) throws(CLIError) -> (RenderOptions, String) {
        var options = baseOptions
        if let rate = job.rate {
            guard (22_050...192_000).contains(rate) else { throw CLIError("rate \(rate) is outside 22050…192000") }
            options.sampleRate = rate
        }
        if let format = job.format {
            guard let encoding = AudioFile.Encoding(rawValue: format) else {
                throw CLIError("format '\(format)' is not s16, s24 or f32")
            }
            options.encoding = encoding
        }
        if let gain = job.gain {
            guard (-60...40).contains(gain) else { throw CLIError("gain \(gain) dB is outside -60…40") }
            options.gainDecibels = gain
        }
        if let tail = job.tail {
            if tail == "auto" {
                options.tail = .automatic
            } else if let seconds = Double(tail), (0...600).contains(seconds) {
                options.tail = .seconds(seconds)
            } else {
                throw CLIError("tail '\(tail)' is not auto or 0…600 seconds")
            }
        }
        if job.loudness != nil || job.truePeak != nil {
            let integrated = job.loudness ?? options.loudness?.integrated
            let ceiling = job.truePeak ?? options.loudness?.truePeakCeiling ?? -1
            guard let integrated, (-70...0).contains(integrated), (-20...0).contains(ceiling) else {
                throw CLIError("loudness needs -70…0 LUFS and truePeak -20…0 dBTP")
            }
            options.loudness = LoudnessTarget(integrated: integrated, truePeakCeiling: ceiling)
        }
        let tailText: String
        switch options.tail {
        case .automatic: tailText = "auto"
        case .seconds(let seconds): tailText = "\(seconds)"
        }
        let text =
            "\(baseOptionsText);rate=\(options.sampleRate);format=\(options.encoding.rawValue);"
            + "gain=\(options.gainDecibels);tail=\(tailText);"
            + "loudness=\(options.loudness.map { "\($0.integrated)/\($0.truePeakCeiling)" } ?? "none")"
        return (options, text)
    }

    /// A renderer for `font` with `options`, sharing the font's one loaded copy.
    private func renderer(font: String, options: RenderOptions) throws -> OfflineRenderer {
        try fonts.withLock { loaded in
            if let renderer = loaded[font] { return OfflineRenderer(sharingSoundFontOf: renderer, options: options) }
            let renderer = try OfflineRenderer(soundFont: font, options: options)
            loaded[font] = renderer
            return renderer
        }
    }

    /// "path:size:mtime".
    static func identity(ofFont path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return path }
        return "\(path):\(info.st_size):\(info.st_mtim.tv_sec)"
    }

    /// Whether process `pid` runs: it exists and is not a zombie (a killed process whose parent
    /// has not collected it still answers `kill(pid, 0)`).
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno != ESRCH else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Removes what killed renders left of `output`: temporary files of processes no longer alive.
    static func removeStaleTemporaries(of output: String) {
        let folder = (output as NSString).deletingLastPathComponent
        let prefix = "." + (output as NSString).lastPathComponent + ".partial-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)
        else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if !isAlive(pid) { unlink((folder.isEmpty ? "" : folder + "/") + name) }
        }
    }
}
