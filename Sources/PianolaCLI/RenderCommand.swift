import ArgumentParser
import Dispatch
import Foundation
import Pianola
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render MIDI files to WAV, FLAC or Ogg through a SoundFont, faster than real time.",
        discussion: """
            The output format follows the extension of -o (.wav, .flac, .ogg, .aiff). With several \
            input files, -o names a folder and each file is rendered to NAME.wav in it (--ext \
            changes the extension).

            The output is written to a temporary name and renamed when complete, so an \
            interrupted render (Ctrl-C, SIGTERM) leaves no half-written file behind.

            Corpus jobs: a folder as input renders every MIDI file under it to the same relative \
            path under -o; --manifest FILE.jsonl reads one job per line ({"input": "a.mid", \
            "output": "a.wav"}, optionally "soundfont", "rate", "format", "gain", "tail", "loudness", \
            "truePeak"; paths \
            relative to the manifest). Both are resumable: each finished output is recorded in a \
            ledger (--ledger; by default MANIFEST.done.jsonl, or .pianola-done.jsonl in the output \
            folder) with a SHA-256 of its input, its SoundFont and options, and skipped on the next \
            run while all of them match. A file that fails is reported in failures.jsonl \
            (--failures; by default beside the ledger) with the reason, and the batch goes on. \
            --jobs N renders N files at once, sharing one copy of each SoundFont.

            Examples:
              pianola render song.mid -o song.wav
              pianola render song.mid -o song.flac --rate 48000 --format s24 --soundfont FluidR3_GM.sf2
              pianola render *.mid -o renders/ --ext flac --synth-reverb off
              pianola render corpus/ -o renders/ --jobs 2
              pianola render --manifest corpus.jsonl --jobs 2
            """)

    @Argument(help: ArgumentHelp("MIDI files (or folders of them) to render.", valueName: "midi-file"))
    var inputs: [String] = []

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Output file (one input) or folder (several, or a folder input).", valueName: "path"))
    var output: String?

    @Option(help: ArgumentHelp("Corpus jobs, one JSON object per line (see above).", valueName: "file.jsonl"))
    var manifest: String?

    @Option(help: ArgumentHelp("Record of finished corpus jobs, for resuming.", valueName: "file.jsonl"))
    var ledger: String?

    @Option(help: ArgumentHelp("Where corpus jobs that fail are reported.", valueName: "file.jsonl"))
    var failures: String?

    @Option(
        name: .shortAndLong, help: ArgumentHelp("SoundFont (.sf2/.sf3); see `pianola soundfont`.", valueName: "file"))
    var soundfont: String?

    @Option(help: ArgumentHelp("Sample rate in Hz, 22050…192000.", valueName: "hz"))
    var rate = 44_100

    @Option(help: ArgumentHelp("Sample format: s16, s24 or f32.", valueName: "format"))
    var format = "s16"

    @Option(help: ArgumentHelp("Output gain in dB (FluidSynth's own gain stays at 0.2).", valueName: "db"))
    var gain = 0.0

    @Option(
        name: .customLong("synth-reverb"), help: ArgumentHelp("FluidSynth's reverb: on or off.", valueName: "on|off"))
    var synthReverb = "on"

    @Option(
        name: .customLong("synth-chorus"), help: ArgumentHelp("FluidSynth's chorus: on or off.", valueName: "on|off"))
    var synthChorus = "on"

    @Option(
        help: ArgumentHelp(
            "Tail after the last event: auto (until below −90 dBFS) or seconds.", valueName: "auto|seconds"))
    var tail = "auto"

    @Option(help: ArgumentHelp("Output extension when -o is a folder.", valueName: "ext"))
    var ext = "wav"

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Render this many files at once (each with its own synthesizer; one copy of the SoundFont for all).",
            valueName: "n"))
    var jobs = 1

    @Option(
        help: ArgumentHelp(
            "Threads to render one file with: its channels split over that many synthesizers whose outputs sum (FluidSynth's multi-core voice rendering when the channels cannot be split evenly). They share one copy of the SoundFont.",
            valueName: "n"))
    var threads = 1

    @Option(
        help: ArgumentHelp(
            "Event timing: exact (every event at its sample, the default) or fluidsynth (as FluidSynth's player places them, for renders that match `fluidsynth -F`).",
            valueName: "exact|fluidsynth"))
    var timing = "exact"

    @OptionGroup var effectOptions: EffectOptions

    @Option(
        help: ArgumentHelp(
            "Also write stems, in one pass: one file per track, MIDI channel or GM instrument family (program), with mix.EXT and stems.json in the -o folder. Effects act on the mix only.",
            valueName: "track|channel|program"))
    var stems: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Normalize to this integrated loudness (LUFS, BS.1770 / EBU R 128), e.g. -14 or -23; after the effects.",
            valueName: "lufs"))
    var loudness: Double?

    @Option(
        name: .customLong("true-peak"), parsing: .unconditional,
        help: ArgumentHelp(
            "True-peak ceiling for --loudness (dBTP; peaks above it go through a true-peak limiter).",
            valueName: "dbtp"))
    var truePeak = -1.0

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (22_050...192_000).contains(rate) else {
            throw ValidationError("--rate must be between 22050 and 192000 Hz, got \(rate)")
        }
        guard AudioFile.Encoding(rawValue: format) != nil else {
            throw ValidationError("--format must be s16, s24 or f32, got '\(format)'")
        }
        guard ["on", "off"].contains(synthReverb) else { throw ValidationError("--synth-reverb must be on or off") }
        guard ["on", "off"].contains(synthChorus) else { throw ValidationError("--synth-chorus must be on or off") }
        guard tail == "auto" || Double(tail).map({ $0 >= 0 && $0 <= 600 }) == true else {
            throw ValidationError("--tail must be auto or a number of seconds (0…600), got '\(tail)'")
        }
        guard (-60...40).contains(gain) else { throw ValidationError("--gain must be between -60 and 40 dB") }
        guard ["exact", "fluidsynth"].contains(timing) else {
            throw ValidationError("--timing must be exact or fluidsynth, got '\(timing)'")
        }
        guard (1...64).contains(threads) else {
            throw ValidationError("--threads must be between 1 and 64, got \(threads)")
        }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 64, got \(jobs)") }
        if let stems {
            guard StemMode(rawValue: stems) != nil else {
                throw ValidationError("--stems must be track, channel or program, got '\(stems)'")
            }
            guard manifest == nil, inputs.count == 1 else { throw ValidationError("--stems renders one MIDI file") }
            guard loudness == nil else {
                throw ValidationError(
                    "--loudness does not combine with --stems yet (stems are measured, not normalized)")
            }
        }
        if let loudness, !(-70...0).contains(loudness) {
            throw ValidationError("--loudness must be between -70 and 0 LUFS, got \(loudness)")
        }
        guard (-20...0).contains(truePeak) else {
            throw ValidationError("--true-peak must be between -20 and 0 dBTP, got \(truePeak)")
        }
        if manifest != nil {
            guard inputs.isEmpty else { throw ValidationError("--manifest takes the inputs from the manifest") }
        } else {
            guard !inputs.isEmpty else { throw ValidationError("name MIDI files to render, or a --manifest") }
            guard output != nil else { throw ValidationError("-o/--output is needed") }
        }
    }

    func run() throws {
        Terminal.trapInterrupts()
        let font: SoundFontDiscovery.Resolution
        do { font = try SoundFontDiscovery().resolve(explicit: soundfont) } catch { throw CLIError(error.description) }
        var options = RenderOptions()
        options.sampleRate = rate
        options.encoding = AudioFile.Encoding(rawValue: format)!
        options.gainDecibels = gain
        options.isSynthReverbEnabled = synthReverb == "on"
        options.isSynthChorusEnabled = synthChorus == "on"
        options.tail = tail == "auto" ? .automatic : .seconds(Double(tail)!)
        options.threads = threads
        options.effects = try effectOptions.specs()
        options.timing = timing == "fluidsynth" ? .fluidSynth : .exact
        options.loudness = loudness.map { LoudnessTarget(integrated: $0, truePeakCeiling: truePeak) }
        if !quiet { Terminal.writeError("SoundFont: \(font.path) (\(font.source.explanation))\n") }

        if let stems, let mode = StemMode(rawValue: stems) {
            try runStems(mode: mode, font: font.path, options: options)
            return
        }
        if manifest != nil || inputs.contains(where: isDirectory) {
            try runCorpus(font: font.path, options: options)
            return
        }
        let work = try plannedOutputs()
        let workerCount = min(max(1, jobs), work.count)
        let failures: Int
        if workerCount == 1 {
            let renderer: OfflineRenderer
            do { renderer = try OfflineRenderer(soundFont: font.path, options: options) } catch {
                throw CLIError(error.description)
            }
            var failed = 0
            for (input, outputPath) in work {
                switch Self.renderOne(
                    input: input, output: outputPath, renderer: renderer, showProgress: !quiet, quiet: quiet)
                {
                case .done(let line): if !quiet { print(line) }
                case .failed(let message):
                    printError(message)
                    failed += 1
                case .cancelled:
                    printError("pianola: interrupted; \(outputPath) was not written")
                    throw ExitCode(130)
                }
            }
            failures = failed
        } else {
            failures = try renderInParallel(work, workers: workerCount, soundFont: font.path, options: options)
        }
        if failures > 0 { throw ExitCode(1) }
    }

    enum Outcome: Sendable {
        case done(String)
        case failed(String)
        case cancelled
    }

    /// Reads and renders one file; the message or summary line says what happened.
    static func renderOne(
        input: String, output outputPath: String, renderer: OfflineRenderer, showProgress: Bool, quiet: Bool
    ) -> Outcome {
        let file: MIDIFile
        do {
            let result = try MIDIFile.read(path: input)
            file = result.file
            if !result.diagnostics.isEmpty && !quiet {
                Terminal.writeError(
                    "warning: \(input): \(result.diagnostics.count) defects recovered (pianola info \(input) lists them)\n"
                )
            }
        } catch {
            return .failed("pianola: \(input): \(error.description)")
        }
        var reporter = ProgressReporter(label: shortName(input), total: file.durationSeconds)
        let started = Terminal.monotonicSeconds()
        do {
            let summary = try renderer.render(file, to: outputPath) { done, _ in
                if showProgress { reporter.update(done: done) }
                return Terminal.interruptSignal == nil
            }
            if showProgress { reporter.finish() }
            if let target = renderer.options.loudness, let measured = summary.loudness,
                abs(measured - target.integrated) > 0.5
            {
                Terminal.writeError(
                    "warning: \(outputPath): \(String(format1: target.integrated)) LUFS is out of reach under "
                        + "\(String(format1: target.truePeakCeiling)) dBTP; got \(String(format1: measured)) LUFS\n")
            }
            let elapsed = Terminal.monotonicSeconds() - started
            let peak = summary.peak > 0 ? 20 * log10(Double(summary.peak)) : -Double.infinity
            let speed = summary.seconds / max(elapsed, 1e-6)
            let loudness =
                summary.loudness.map { ", \(String(format1: $0)) LUFS, \(String(format1: summary.truePeak ?? 0)) dBTP" }
                ?? ""
            return .done(
                "\(outputPath): \(Terminal.clock(summary.seconds)) (\(Terminal.clock(summary.musicSeconds)) music + \(String(format1: summary.tailSeconds)) s tail), peak \(String(format1: peak)) dBFS\(loudness), \(Int(speed))× real time"
            )
        } catch .cancelled {
            if showProgress { reporter.finish() }
            return .cancelled
        } catch {
            if showProgress { reporter.finish() }
            return .failed("pianola: \(input): \(error.description)")
        }
    }

    /// Renders `work` on `workers` threads, each with its own renderer; returns the failure count.
    private func renderInParallel(
        _ work: [(String, String)], workers: Int, soundFont: String, options: RenderOptions
    ) throws -> Int {
        let queue = RenderQueue(work.map { RenderQueue.Item(input: $0.0, output: $0.1) })
        let quiet = self.quiet
        let loaded: OfflineRenderer
        do { loaded = try OfflineRenderer(soundFont: soundFont, options: options) } catch {
            throw CLIError(error.description)
        }
        var threads: [Thread] = []
        let finished = DispatchGroup()
        for _ in 0..<workers {
            finished.enter()
            let renderer = OfflineRenderer(sharingSoundFontOf: loaded)
            let thread = Thread {
                defer { finished.leave() }
                while let item = queue.next() {
                    let outcome = Self.renderOne(
                        input: item.input, output: item.output, renderer: renderer, showProgress: false, quiet: quiet)
                    queue.record(outcome, for: item, total: work.count, quiet: quiet)
                    if case .cancelled = outcome { return }
                }
            }
            thread.stackSize = 4 << 20
            threads.append(thread)
            thread.start()
        }
        finished.wait()
        if queue.wasCancelled { throw ExitCode(130) }
        return queue.failureCount
    }

    /// Stems of one file into the -o folder, with stems.json.
    private func runStems(mode: StemMode, font: String, options: RenderOptions) throws {
        let folder = output ?? "."
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw CLIError("cannot create output folder \(folder): \(error.localizedDescription)")
        }
        let input = inputs[0]
        let file: MIDIFile
        do { file = try MIDIFile.read(path: input).file } catch { throw CLIError("\(input): \(error.description)") }
        let renderer: OfflineRenderer
        do { renderer = try OfflineRenderer(soundFont: font, options: options) } catch {
            throw CLIError(error.description)
        }
        var reporter = ProgressReporter(label: Self.shortName(input), total: file.durationSeconds)
        let started = Terminal.monotonicSeconds()
        let result: (mix: RenderSummary, stems: [StemInfo])
        do {
            result = try renderer.renderStems(file, toFolder: folder, mode: mode, fileExtension: ext) { done, _ in
                if !quiet { reporter.update(done: done) }
                return Terminal.interruptSignal == nil
            }
        } catch .cancelled {
            if !quiet { reporter.finish() }
            printError("pianola: interrupted; no stem was written")
            throw ExitCode(130)
        } catch {
            if !quiet { reporter.finish() }
            throw CLIError("\(input): \(error.description)")
        }
        if !quiet { reporter.finish() }
        func number(_ value: Double) -> JSONValue { value.isFinite ? .number((value * 100).rounded() / 100) : .null }
        let entries: [JSONValue] = result.stems.map { stem in
            .object([
                "file": .string(stem.file), "kind": .string(stem.kind), "name": .string(stem.name),
                "tracks": .array(stem.tracks.map { .number(Double($0)) }),
                "trackNames": .array(stem.trackNames.map { .string($0) }),
                "channels": .array(stem.channels.map { .number(Double($0)) }),
                "programs": .array(stem.programs.map { .number(Double($0)) }),
                "family": stem.family.map { .string($0) } ?? .null, "notes": .number(Double(stem.notes)),
                "loudness": number(stem.loudness), "truePeak": number(stem.truePeak),
            ])
        }
        let document: JSONValue = .object([
            "input": .string(input), "mode": .string(mode.rawValue), "sampleRate": .number(Double(options.sampleRate)),
            "frames": .number(Double(result.mix.frames)), "stems": .array(entries),
        ])
        do {
            try Data((document.serialized() + "\n").utf8).write(
                to: URL(fileURLWithPath: folder + "/stems.json"), options: .atomic)
        } catch {
            throw CLIError("\(folder)/stems.json: cannot write it (\(error.localizedDescription))")
        }
        if !quiet {
            let elapsed = Terminal.monotonicSeconds() - started
            print(
                "\(folder): \(result.stems.count - 1) stems by \(mode.rawValue) + mix, "
                    + "\(Terminal.clock(result.mix.seconds)), \(Int(result.mix.seconds / max(elapsed, 1e-6)))× real time"
            )
            for stem in result.stems {
                print(
                    "  \(stem.file): \(stem.name), \(stem.notes) notes, \(String(format1: stem.loudness)) LUFS")
            }
        }
    }

    /// Corpus mode: a manifest or folder trees, resumable through the ledger.
    private func runCorpus(font: String, options: RenderOptions) throws {
        var work: [CorpusJob] = []
        var problems: [CorpusJobProblem] = []
        let ledgerPath: String
        if let manifest {
            (work, problems) = try CorpusPlan.manifest(at: manifest)
            ledgerPath = ledger ?? manifest + ".done.jsonl"
        } else {
            let output = self.output ?? "."
            for input in inputs {
                if isDirectory(input) {
                    work += CorpusPlan.folder(input, output: output, ext: ext)
                } else {
                    var base = Self.shortName(input)
                    if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
                    work.append(CorpusJob(input: input, output: output + "/" + base + "." + ext, origin: input))
                }
            }
            try? FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            ledgerPath = ledger ?? output + "/.pianola-done.jsonl"
        }
        let failuresPath =
            failures
            ?? (ledgerPath as NSString).deletingLastPathComponent.appendingPathComponent(
                manifest.map {
                    (($0 as NSString).lastPathComponent as NSString).deletingPathExtension + ".failures.jsonl"
                }
                    ?? "failures.jsonl")
        // This run's failures (a failure is retried on the next run: it is not in the ledger).
        unlink(failuresPath)
        let journal = CorpusLedger(path: ledgerPath)
        let runner = CorpusRunner(
            jobs: work, defaultFont: font, options: options, optionsText: corpusOptionsText(options), ledger: journal,
            failuresPath: failuresPath, quiet: quiet)
        for problem in problems { runner.fail(problem) }
        let started = Terminal.monotonicSeconds()
        let summary = runner.run(workers: jobs)
        let elapsed = Terminal.monotonicSeconds() - started
        if !quiet {
            let speed = String(format1: summary.audioSeconds / max(elapsed, 1e-6))
            let counts = "\(summary.rendered) rendered, \(summary.skipped) already done, \(summary.failed) failed"
            let audio =
                "\(Terminal.clock(summary.audioSeconds)) of audio in \(Terminal.clock(elapsed)), \(speed)× real time"
            let where_ = summary.failed > 0 ? "; failures in \(failuresPath)" : ""
            Terminal.writeError("\(counts) (\(work.count + problems.count) jobs): \(audio)\(where_)\n")
        }
        if summary.cancelled {
            printError("pianola: interrupted; finished outputs are recorded in \(ledgerPath), rerun to resume")
            throw ExitCode(130)
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }

    /// The command-wide settings that shape a render, as the ledger records them.
    private func corpusOptionsText(_ options: RenderOptions) -> String {
        "reverb=\(synthReverb);chorus=\(synthChorus);timing=\(timing);threads=\(threads);"
            + "truePeak=\(truePeak);"
            + "fx=\(options.effects.map { "\($0.name)\($0.values.sorted { $0.key < $1.key })" }.joined(separator: "+"))"
    }

    /// (input, output) pairs: one file, or a folder of renders named after the inputs.
    private func plannedOutputs() throws -> [(String, String)] {
        let output = self.output ?? "."
        if inputs.count == 1 && !isDirectory(output) && !output.hasSuffix("/") {
            return [(inputs[0], output)]
        }
        if !isDirectory(output) {
            guard mkdir(output, 0o755) == 0 else {
                throw CLIError("cannot create output folder \(output): \(String(cString: strerror(errno)))")
            }
        }
        let folder = output.hasSuffix("/") ? String(output.dropLast()) : output
        var used: Set<String> = []
        return inputs.map { input in
            var base = Self.shortName(input)
            if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
            var name = base + "." + ext
            var counter = 2
            while used.contains(name) {
                name = "\(base)-\(counter).\(ext)"
                counter += 1
            }
            used.insert(name)
            return (input, folder + "/" + name)
        }
    }

    private func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func shortName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}

extension String {
    /// One decimal place.
    init(format1 value: Double) {
        guard value.isFinite else {
            self = value < 0 ? "-inf" : "inf"
            return
        }
        let scaled = (value * 10).rounded()
        let whole = Int(scaled / 10)
        let tenth = Int(abs(scaled)) % 10
        self = (scaled < 0 && whole == 0 ? "-" : "") + "\(whole).\(tenth)"
    }
}

/// The shared work list of a parallel render.
final class RenderQueue: Sendable {
    struct Item: Sendable {
        var input: String
        var output: String
    }
    private struct State {
        var pending: [Item]
        var completed = 0
        var failures = 0
        var cancelled = false
    }
    private let state: Mutex<State>

    init(_ items: [Item]) { state = Mutex(State(pending: items.reversed())) }

    func next() -> Item? {
        state.withLock { state in
            guard !state.cancelled, Terminal.interruptSignal == nil else {
                state.cancelled = state.cancelled || Terminal.interruptSignal != nil
                return nil
            }
            return state.pending.popLast()
        }
    }

    func record(_ outcome: RenderCommand.Outcome, for item: Item, total: Int, quiet: Bool) {
        state.withLock { state in
            state.completed += 1
            switch outcome {
            case .done(let line): if !quiet { print("[\(state.completed)/\(total)] \(line)") }
            case .failed(let message):
                state.failures += 1
                printError(message)
            case .cancelled:
                state.cancelled = true
                printError("pianola: interrupted; \(item.output) was not written")
            }
        }
    }

    func fail(everythingWith message: String) {
        state.withLock { state in
            state.failures += state.pending.count
            state.pending.removeAll()
            printError(message)
        }
    }

    var failureCount: Int { state.withLock { $0.failures } }
    var wasCancelled: Bool { state.withLock { $0.cancelled } }
}
