import ArgumentParser
import FoundationEssentials
import Pianola
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render MIDI files to WAV, FLAC, Ogg, Opus, MP3 or AIFF through a SoundFont, faster than real time.",
        discussion: """
            The output format follows the extension of -o (.wav, .flac, .ogg for Ogg Vorbis, .opus, \
            .mp3, .aiff, or .raw for headerless little-endian samples). --quality or --bitrate set \
            the size of .mp3, .opus and .ogg files. Opus holds 8, 12, 16, 24 or 48 kHz and MP3 8 to \
            48 kHz: a render at another rate goes into the file converted to the next rate up (44.1 \
            kHz into Opus at 48 kHz; above 48 kHz, 48 kHz). With several input files, -o names a folder and each \
            file is rendered to NAME.wav in it (--ext changes the extension). -o - writes one \
            render to standard output once it is complete (--ext picks the type, WAV by default), \
            for pipelines; messages then go to standard error only.

            Progress shows on standard error when it is a terminal; into a pipe or a file only the \
            summaries are written (each file's line on standard output, a corpus's last line on \
            standard error).

            The output is written to a temporary name and renamed when complete, so an \
            interrupted render (Ctrl-C, SIGTERM, SIGHUP) leaves no half-written file behind. An \
            existing output is replaced only with --force (a corpus job's own outputs, recorded in \
            its ledger, are rendered again when their input or settings change); an input file \
            (a MIDI file, a SoundFont) is never written over.

            Corpus jobs: a folder as input renders every MIDI file under it to the same relative \
            path under -o; --manifest FILE.jsonl reads one job per line ({"input": "a.mid", \
            "output": "a.wav"}, optionally "soundfont", "rate", "format", "gain", "tail", "loudness", \
            "truePeak", "engine"; paths \
            relative to the manifest). Both are resumable: each finished output is recorded in a \
            ledger (--ledger; by default jobs.done.jsonl beside jobs.jsonl, or .pianola-done.jsonl in \
            the output folder) with a SHA-256 of its input, its SoundFont and options, and skipped on \
            the next run while all of them match. A file that fails is reported, with the reason, in \
            the failure log named like the ledger (jobs.failures.jsonl, .pianola-failures.jsonl; \
            --failures), and the batch goes on. \
            --jobs N renders N files at once, sharing one copy of each SoundFont.

            Examples:
              pianola render song.mid -o song.wav
              pianola render song.mid -o song.flac -r 48000 --format s24 -s FluidR3_GM.sf2
              pianola render *.mid -o renders/ --ext flac --synth-reverb off
              pianola render song.mid -o song.mp3 --quality 0.9
              pianola render song.mid -o - --ext flac | ffmpeg -i - song.m4a
              pianola render corpus/ -o renders/ --jobs 2
              pianola render --manifest corpus.jsonl --jobs 2
            """)

    @Argument(
        help: ArgumentHelp("MIDI files (or folders of them) to render.", valueName: "midi-file"),
        completion: .file(extensions: midiFileExtensions))
    var inputs: [String] = []

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Output file (one input) or folder (several, or a folder input); without it, each song's render goes beside it (song.mid → song.wav).",
            valueName: "path"))
    var output: String?

    @Option(help: ArgumentHelp("Corpus jobs, one JSON object per line (see above).", valueName: "file.jsonl"))
    var manifest: String?

    @Option(help: ArgumentHelp("Record of finished corpus jobs, for resuming.", valueName: "file.jsonl"))
    var ledger: String?

    @Option(help: ArgumentHelp("Where corpus jobs that fail are reported.", valueName: "file.jsonl"))
    var failures: String?

    @OptionGroup var soundFonts: SoundFontOptions

    @OptionGroup var settings: RenderSettings

    @OptionGroup var synth: SynthOptions

    @OptionGroup var engineOptions: EngineOptions

    @OptionGroup var song: SongOptions

    @OptionGroup var inputLimit: InputLimitOptions

    @Option(
        help: ArgumentHelp(
            "Output extension when -o is a folder or not given, or the type written to standard output with -o - (wav, flac, ogg, opus, mp3, aiff, raw).",
            valueName: "ext"))
    var ext = "wav"

    @Option(
        name: .shortAndLong, parsing: .unconditional,
        help: ArgumentHelp(
            "Render this many files at once (each with its own synthesizer; one copy of the SoundFont for all).",
            valueName: "n"))
    var jobs = 1

    @OptionGroup var effectOptions: EffectOptions

    @OptionGroup var channelMap: ChannelMapOptions

    @Option(
        help: ArgumentHelp(
            "Also write stems, in one pass: one file per track (track-NN-NAME, numbered as `pianola info` numbers tracks), MIDI channel or GM instrument family (program), with mix.EXT and stems.json in the -o folder. Effects act on the mix only.",
            valueName: "track|channel|program"),
        completion: StemMode.completion, transform: StemMode.parser(for: "--stems"))
    var stems: StemMode?

    @Option(
        help: ArgumentHelp(
            "With --stems, also write every stem into this one multichannel file: stem 1 on channels 1-2, stem 2 on 3-4, … in stems.json's order.",
            valueName: "path"))
    var multichannel: String?

    @Flag(
        help:
            "Print one JSON object per output on standard output (input, output, status, seconds, peak, loudness, soundFonts: the files played, soundFontLinks: the links they were given as, error), for pipelines."
    )
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Replace outputs that exist (never an input).")
    var force = false

    func validate() throws {
        if let error = Mistakes.soundFontAmongSongs(inputs, command: "render") { throw error }
        if manifest == nil {
            // One file named by -o, or files named with --ext (a folder, beside the songs, -o -).
            let single =
                output.map { $0 != "-" && !$0.hasSuffix("/") && !Self.isFolder($0) } == true && stems == nil
                && inputs.count == 1 && !inputs.contains(where: Self.isFolder)
            let channels = (try? channelMap.routing())?.map(\.channelCount) ?? 2
            try settings.compression.check(
                output: single ? output ?? "" : "render." + ext, sampleRate: Double(settings.rate),
                channelCount: channels,
                format: settings.sampleFormat.format == .s16 ? nil : settings.sampleFormat.format)
        }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 64, got \(jobs)") }
        if settings.timing == .fluidSynth && (song.speed != 1 || song.start != nil) {
            throw ValidationError("--timing fluidsynth plays from the start at speed 1: no --speed or --start with it")
        }
        try engineOptions.check(synth: synth, soundFonts: soundFonts, timing: settings.timing)
        if engineOptions.engine == .native && !channelMap.routes.isEmpty {
            throw ValidationError("--channel-map needs FluidSynth's engine: not with --engine native")
        }
        if !channelMap.routes.isEmpty {
            guard stems == nil, manifest == nil, inputs.count == 1, !inputs.contains(where: Self.isFolder),
                output != "-",
                settings.loudness == nil
            else {
                throw ValidationError(
                    "--channel-map renders one MIDI file to one multichannel file: no folder, --stems, --manifest, --loudness or -o -"
                )
            }
        }
        if multichannel != nil && stems == nil {
            throw ValidationError("--multichannel writes the stems into one file: give --stems too")
        }
        if stems != nil {
            guard manifest == nil, inputs.count == 1 else { throw ValidationError("--stems renders one MIDI file") }
            guard let output else { throw ValidationError("--stems writes a folder of files: name it with -o") }
            if Self.namesAudioFile(output) {
                throw ValidationError(
                    "--stems writes a folder of files, but -o \(output) names an audio file: give a folder, e.g. -o stems/"
                )
            }
        }
        if output == "-" {
            guard manifest == nil, stems == nil, inputs.count == 1, !inputs.contains(where: Self.isFolder) else {
                throw ValidationError("-o - writes one MIDI file's render to standard output: give one input file")
            }
            guard !json else { throw ValidationError("-o - writes audio to standard output: no --json with it") }
            guard Self.streamTypes.contains(ext.lowercased()) else {
                throw ValidationError(
                    "--ext \(ext) cannot go to standard output: use wav, flac, ogg, opus, mp3, aiff or raw")
            }
        }
        if manifest != nil {
            guard inputs.isEmpty else { throw ValidationError("--manifest takes the inputs from the manifest") }
        } else {
            guard !inputs.isEmpty else { throw ValidationError("name MIDI files to render, or a --manifest") }
            // Without -o, each song's render goes beside it (`song.mid` → `song.wav`), as timidity -Ow does.
            guard let output else {
                if inputs.contains(where: Self.isFolder) {
                    throw ValidationError("a folder renders into a folder: give it with -o, e.g. -o renders/")
                }
                return
            }
            if inputs.count > 1 || inputs.contains(where: Self.isFolder), Self.namesAudioFile(output) {
                throw ValidationError(
                    "-o \(output) names a file, but several MIDI files (or a folder) render into a folder: give one, e.g. -o renders/"
                )
            }
        }
    }

    func run() throws {
        Terminal.trapInterrupts()
        inputLimit.apply()
        // One heap for every thread, its free top returned at once: loading (fonts parsed, read
        // again as the song's subset, SF3 decoded on helper threads) leaves freed memory that
        // per-thread heaps would keep resident through the render, which allocates nothing.
        // About 5 MB less at the peak; render threads never allocate, so they cannot contend.
        HeapTuning.set(HeapTuning.arenaMax, 1)
        HeapTuning.set(HeapTuning.trimThreshold, 128 << 10)
        let fonts = try soundFonts.resolve()
        var options = settings.options(synth: synth, song: song, effects: try effectOptions.specs())
        options.sampleLoading = try soundFonts.songLoading()
        options.engine = engineOptions.engine
        // FluidSynth reads whole fonts: samples read on demand sit in buffers of their own, which
        // changes interpolation at their edges. Matching `fluidsynth -F` loads all unless told.
        if settings.timing == .fluidSynth && soundFonts.load == nil { options.sampleLoading = .whole }
        // The loudness is measured where it is shown: summary lines and JSON.
        options.measuresLoudness = json || (!quiet && manifest == nil && !inputs.contains(where: Self.isFolder))
        if !quiet { SoundFontOptions.describe(fonts) }
        let paths = fonts.map(\.path)
        if let stems {
            try renderStems(mode: stems, fonts: paths, options: options)
        } else if let routing = try channelMap.routing() {
            try renderRouted(routing, fonts: paths, options: options)
        } else if manifest != nil || inputs.contains(where: Self.isFolder) {
            try renderCorpus(fonts: paths, options: options)
        } else if output == "-" {
            try renderToStandardOutput(fonts: paths, options: options)
        } else {
            try renderFiles(fonts: paths, options: options, output: output)
        }
    }

    /// Whether `path`, which is no folder, has an audio file's extension: what a folder output
    /// (several files, a folder, stems) refuses.
    static func namesAudioFile(_ path: String) -> Bool {
        let audioExtensions: Set<String> = ["wav", "flac", "ogg", "oga", "opus", "mp3", "aiff", "aif", "raw"]
        return !isFolder(path) && audioExtensions.contains(POSIXSupport.pathExtension(of: path).lowercased())
    }

    /// What `-o -` writes: every type, finished in a temporary file before the bytes leave (libsndfile
    /// writes a broken MP3 into a pipe).
    static let streamTypes: Set<String> = ["wav", "flac", "ogg", "opus", "mp3", "aiff", "raw"]

    /// `-o -`: the render goes to a temporary file, whose header is complete only at its end, then
    /// to standard output; an interrupted or failed render writes nothing there.
    private func renderToStandardOutput(fonts: [String], options: RenderOptions) throws {
        let temporary = FileManager.default.temporaryDirectory.path + "/pianola-\(getpid())-stdout.\(ext.lowercased())"
        defer { unlink(temporary) }
        try renderFiles(fonts: fonts, options: options, output: temporary, standIn: true)
        guard let file = fopen(temporary, "rb") else {
            throw CLIError("cannot read the render back from \(temporary): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            var sent = 0
            while sent < count {
                let written = chunk.withUnsafeBytes { buffer in
                    // The chunk is never empty, so it has an address; 0 would say nothing was written.
                    guard let base = buffer.baseAddress else { return 0 }
                    return write(STDOUT_FILENO, base + sent, count - sent)
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw CLIError("cannot write to standard output: \(String(cString: strerror(errno)))")
                }
                sent += written
            }
        }
    }

    /// Files to a file, or to a folder of renders named after them.
    private func renderFiles(fonts: [String], options: RenderOptions, output: String?, standIn: Bool = false) throws {
        let plan: BatchPlan
        var createsFolders = false
        if let output {
            let single = inputs.count == 1 && !Self.isFolder(output) && !output.hasSuffix("/")
            plan =
                single
                ? BatchPlan(jobs: [BatchJob(input: inputs[0], output: output)])
                : BatchPlan(files: inputs, intoFolder: output, fileExtension: ext)
            createsFolders = !single
        } else {
            plan = BatchPlan(jobs: inputs.map { BatchJob(input: $0, output: Self.besideSong($0, fileExtension: ext)) })
        }
        var configuration = BatchRunner.Configuration(soundFonts: fonts, options: options)
        configuration.createsFolders = createsFolders
        configuration.replacesExistingOutputs = force || standIn
        configuration.longestFirst = false
        let workers = min(jobs, plan.jobs.count)
        configuration.reportsProgress = workers == 1 && !quiet
        let runner = BatchRunner(plan, configuration: configuration)
        try runner.loadSoundFonts()
        var reporter = BatchReporter(style: workers == 1 ? .oneAtATime : .numbered, quiet: quiet)
        reporter.json = json
        reporter.soundFonts = fonts
        if standIn { reporter.standardOutputStandIn = output }
        let summary = runner.run(workers: workers, isCancelled: { Terminal.interruptSignal != nil }) {
            reporter.show($0)
        }
        reporter.finish()
        if summary.cancelled {
            // Interrupted between files: say what was left undone.
            if !reporter.reportedCancellation {
                let left = summary.total - summary.finished
                printError("pianola: interrupted; \(counted(left, "file")) \(left == 1 ? "was" : "were") not rendered")
            }
            throw Terminal.interruptExitCode
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }

    /// Where a song's render goes without -o: beside it, with `fileExtension` for its own
    /// (`songs/a.mid` → `songs/a.wav`).
    static func besideSong(_ song: String, fileExtension: String) -> String {
        POSIXSupport.deletingPathExtension(song) + "." + fileExtension
    }

    /// A manifest's ledger: `jobs.done.jsonl` beside `jobs.jsonl` (or the `jobs.jsonl.done.jsonl` an
    /// earlier version named, when only that one exists, so that a batch still resumes).
    static func manifestLedger(_ manifest: String) -> String {
        let legacy = manifest + ".done.jsonl"
        let ledger = POSIXSupport.deletingPathExtension(manifest) + ".done.jsonl"
        let files = FileManager.default
        return files.fileExists(atPath: legacy) && !files.fileExists(atPath: ledger) ? legacy : ledger
    }

    /// The failure log named like its ledger, in the same folder: `X.done.jsonl` → `X.failures.jsonl`,
    /// `.pianola-done.jsonl` → `.pianola-failures.jsonl`, another name `Y.jsonl` → `Y.failures.jsonl`.
    static func failuresPath(besideLedger ledger: String) -> String {
        let stem = POSIXSupport.deletingPathExtension(ledger)
        for (done, failures) in [(".done", ".failures"), ("-done", "-failures")] where stem.hasSuffix(done) {
            return stem.dropLast(done.count) + failures + ".jsonl"
        }
        return stem + ".failures.jsonl"
    }

    /// A manifest or folder trees, resumable through the ledger.
    private func renderCorpus(fonts: [String], options: RenderOptions) throws {
        var plan = BatchPlan()
        let ledgerPath: String
        if let manifest {
            plan = try BatchPlan(manifestAt: manifest)
            ledgerPath = ledger ?? Self.manifestLedger(manifest)
        } else {
            let output = self.output ?? "."
            for input in inputs {
                if Self.isFolder(input) {
                    let folder = BatchPlan(midiFilesUnder: input, intoFolder: output, fileExtension: ext)
                    plan.jobs += folder.jobs
                    plan.problems += folder.problems
                } else {
                    let name = output + "/" + BatchPlan.baseName(of: input) + "." + ext
                    plan.jobs.append(BatchJob(input: input, output: name))
                }
            }
            do throws(POSIXReason) { try POSIXSupport.makeDirectories(output) } catch {
                throw CLIError("cannot create output folder \(output): \(error)")
            }
            ledgerPath = ledger ?? output + "/.pianola-done.jsonl"
        }
        let failureLog = BatchFailureLog(path: failures ?? Self.failuresPath(besideLedger: ledgerPath))
        // This run's failures (a failure is retried on the next run: it is not in the ledger).
        failureLog.clear()
        var configuration = BatchRunner.Configuration(soundFonts: fonts, options: options)
        configuration.ledger = BatchLedger(path: ledgerPath)
        configuration.replacesExistingOutputs = force
        configuration.failureLog = failureLog
        var reporter = BatchReporter(style: .corpus, quiet: quiet)
        reporter.json = json
        reporter.soundFonts = fonts
        let summary = BatchRunner(plan, configuration: configuration).run(
            workers: jobs, isCancelled: { Terminal.interruptSignal != nil }
        ) { reporter.show($0) }
        reporter.finishCorpus(summary, failures: failureLog.path)
        if summary.cancelled {
            printError("pianola: interrupted; finished outputs are recorded in \(ledgerPath), rerun to resume")
            throw Terminal.interruptExitCode
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }

    /// One file to one multichannel file, its parts on the channels `--channel-map` names.
}
