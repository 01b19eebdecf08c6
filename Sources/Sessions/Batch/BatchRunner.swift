import Dispatch
import FoundationEssentials
import MIDICore
import PianolaSupport
import SMF
import Sampler
import Sequencer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Renders the jobs of a batch (a folder tree, a manifest, or a list of files) on a pool of
/// worker threads that share one loaded copy of each SoundFont.
///
/// With a ledger, a batch is resumable: an output recorded with the same input (by SHA-256),
/// SoundFont and settings is skipped, and every finished output is recorded. A job that fails
/// fails alone, into the failure log if there is one; the batch goes on. Events come back on the
/// thread that called `run`, so whoever prints them needs no lock.
public final class BatchRunner: Sendable {
    /// How a batch runs.
    public struct Configuration: Sendable {
        /// The SoundFonts of jobs that name none, stacked (the last one's presets come first).
        public var soundFonts: [String]
        /// The settings of every job (a manifest line may change some for its job).
        public var options: RenderOptions
        /// The ledger that makes the batch resumable: jobs it records as done are skipped, and every finished
        /// output is recorded. Nil renders every job.
        public var ledger: BatchLedger?
        /// Where failed jobs are logged, one JSON line each (appended to: the runner does not clear it), or nil.
        public var failureLog: BatchFailureLog?
        /// Whether a job creates its output's folder (and clears what killed renders left there).
        public var createsFolders = true
        /// Longest first (by file size): the last jobs to finish are short ones, so no worker sits
        /// idle at the end while one long song renders alone. Otherwise in the order given.
        public var longestFirst = true
        /// Whether jobs report their render's progress (`BatchEvent.progress`).
        public var reportsProgress = false
        /// Whether a job replaces an output that exists already. Off, such a job fails
        /// (`BatchError.outputExists`), unless the ledger records that output as the batch's own.
        /// An output that is one of the batch's inputs is never replaced.
        public var replacesExistingOutputs = false

        /// A configuration rendering with `soundFonts` and `options`: no ledger, no failure log.
        public init(soundFonts: [String], options: RenderOptions = RenderOptions()) {
            self.soundFonts = soundFonts
            self.options = options
        }
    }

    /// How the batch runs, as given to `init`.
    public let configuration: Configuration
    private let problems: [BatchProblem]
    /// The batch's inputs (MIDI files and SoundFonts) by device and inode, with their paths:
    /// no output is written over one of them.
    private let inputFiles: [FileIdentity: String]
    private let state: Mutex<State>
    /// The loaded font stacks, by their paths.
    private let fonts = Mutex<[[String]: OfflineRenderer]>([:])
    private let wake = DispatchSemaphore(value: 0)
    /// Outputs a killed run of the batch had published but not recorded (`PartialFiles.removeStale`):
    /// the batch's own, which rendering them again may replace.
    private let publishedUnrecorded = Mutex<Set<FileIdentity>>([])

    private struct State {
        var pending: [BatchJob]
        var summary = BatchSummary()
        var events: [BatchEvent] = []
        var runningWorkers = 0
        var started = 0.0
        /// Whether `run` has returned (`summary` then holds the batch's time).
        var isOver = false
    }

    /// A runner for `plan`: its jobs (longest first, by file size, when `configuration.longestFirst`), and its
    /// problems, which `run` reports as failed jobs. Loads nothing: a SoundFont loads with the first job that
    /// uses it, or with `loadSoundFonts()`.
    public init(_ plan: BatchPlan, configuration: Configuration) {
        self.configuration = configuration
        problems = plan.problems
        var jobs = plan.jobs
        if configuration.longestFirst {
            let sizes = jobs.map { job -> Int in
                var info = stat()
                return stat(job.input, &info) == 0 ? Int(info.st_size) : 0
            }
            jobs = jobs.indices.sorted { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) }.map { jobs[$0] }
        }
        var inputs: [FileIdentity: String] = [:]
        for path in jobs.map(\.input) + jobs.compactMap(\.soundFont) + configuration.soundFonts {
            if let identity = FileIdentity(path: path) { inputs[identity] = path }
        }
        inputFiles = inputs
        var initial = State(pending: jobs.reversed())
        initial.summary.total = plan.jobs.count + plan.problems.count
        state = Mutex(initial)
    }

    /// Loads the batch's SoundFonts now rather than with the first job that uses them, so that a
    /// font that cannot be loaded is one error before anything starts.
    public func loadSoundFonts() throws(SoundFontError) {
        _ = try renderer(fonts: configuration.soundFonts, options: configuration.options)
    }

    /// Runs every job on `workers` threads and returns when all are done, or when `isCancelled`
    /// turns true (the jobs in flight stop and write nothing). `handle` receives the events, on
    /// this thread.
    ///
    /// A runner runs its batch once: a later call (or one while it runs) runs nothing, hands
    /// `handle` no event and returns the counts so far. When the system refuses some of the worker
    /// threads the others do the jobs; when it refuses them all, the jobs run on this thread, their
    /// events handed over after each job.
    public func run(
        workers: Int, isCancelled: @escaping @Sendable () -> Bool = { false }, events handle: (BatchEvent) -> Void
    ) -> BatchSummary {
        let jobCount = state.withLock { state -> Int? in
            guard state.started == 0 else { return nil }
            state.started = Self.monotonicSeconds()
            return state.pending.count
        }
        guard let jobCount else {
            return state.withLock { state in
                var summary = state.summary
                if !state.isOver { summary.elapsedSeconds = Self.monotonicSeconds() - state.started }
                return summary
            }
        }
        for problem in problems {
            let job = BatchJob(input: problem.input, output: problem.output, origin: problem.origin)
            finish(job, .failed(reason: problem.reason))
        }
        let threads = max(1, min(workers, jobCount))
        state.withLock { $0.runningWorkers = threads }
        for _ in 0..<threads {
            do throws(POSIXReason) {
                // FluidSynth's SoundFont loading recurses deeply on some banks.
                try SystemThread.detach(stackSize: 4 << 20) { [self] in
                    while let job = next(isCancelled: isCancelled) { perform(job, isCancelled: isCancelled) }
                    state.withLock { $0.runningWorkers -= 1 }
                    wake.signal()
                }
            } catch {
                // One worker fewer; with none at all, this thread does the jobs.
                let none = state.withLock { state in
                    state.runningWorkers -= 1
                    return state.runningWorkers == 0
                }
                if none {
                    while let job = next(isCancelled: isCancelled) {
                        perform(job, isCancelled: isCancelled)
                        deliverEvents(to: handle)
                    }
                    wake.signal()
                }
            }
        }
        while true {
            wake.wait()
            if deliverEvents(to: handle) { break }
        }
        return state.withLock { state in
            state.summary.elapsedSeconds = Self.monotonicSeconds() - state.started
            state.isOver = true
            return state.summary
        }
    }

    /// Hands the events posted so far to `handle`; whether every worker is done.
    @discardableResult
    private func deliverEvents(to handle: (BatchEvent) -> Void) -> Bool {
        let (events, done) = state.withLock { state -> ([BatchEvent], Bool) in
            let events = state.events
            state.events.removeAll()
            return (events, state.runningWorkers == 0)
        }
        for event in events { handle(event) }
        return done
    }

    func post(_ event: BatchEvent) {
        state.withLock { $0.events.append(event) }
        wake.signal()
    }

    private func next(isCancelled: () -> Bool) -> BatchJob? {
        let cancelled = isCancelled()
        return state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            if cancelled {
                state.summary.cancelled = true
                return nil
            }
            return state.pending.popLast()
        }
    }

    private func perform(_ job: BatchJob, isCancelled: @escaping @Sendable () -> Bool) {
        let fonts = job.soundFont.map { [$0] } ?? configuration.soundFonts
        let options: RenderOptions
        var bytes: [UInt8]
        do throws(BatchError) { options = try job.options(over: configuration.options) } catch {
            return finish(job, .failed(reason: error.description))
        }
        do { bytes = try MIDIFile.readBytes(path: job.input, isCancelled: isCancelled) } catch {
            if case .interrupted = error { return finish(job, .cancelled) }
            return finish(job, .failed(reason: error.description))
        }
        let fingerprint = configuration.ledger.map { _ in
            BatchFingerprint(
                inputSHA256: SHA256.hex(bytes), soundFont: fonts.map(Self.identity(ofFont:)).joined(separator: ";"),
                options: options.fingerprint)
        }
        if let ledger = configuration.ledger, let fingerprint, ledger.isDone(job.output, fingerprint) {
            return finish(job, .skipped)
        }
        let renderer: OfflineRenderer
        do { renderer = try self.renderer(fonts: fonts, options: options) } catch {
            return finish(job, .failed(reason: error.description))
        }
        let published = PartialFiles.removeStale(besides: job.output)
        if !published.isEmpty { publishedUnrecorded.withLock { $0.formUnion(published) } }
        if let problem = outputProblem(job) { return finish(job, .failed(reason: problem.description)) }
        if configuration.createsFolders {
            let folder = POSIXSupport.folder(of: job.output)
            do throws(POSIXReason) { try POSIXSupport.makeDirectories(folder) } catch {
                return finish(
                    job,
                    .failed(reason: BatchError.cannotCreateFolder(path: folder, reason: error.description).description))
            }
        }
        // The sequence is all the render needs: the file's bytes and its parsed events are freed
        // before the render starts (a million-note song holds some 40 MB in them).
        let sequence: MusicSequence
        do {
            let read = try MIDIFile.read(bytes: bytes)
            bytes = []
            sequence = MusicSequence(file: withoutDefectGaps(read, job: job))
            if !read.diagnostics.isEmpty { post(.defectsRecovered(job, count: read.diagnostics.count)) }
        } catch {
            return finish(job, .failed(reason: error.description))
        }
        let started = Self.monotonicSeconds()
        var lastReport = -1.0
        var lastDecile = -1
        // With a ledger, the output is staged under a temporary name that stays a second name for
        // it until the ledger records it (`PartialFiles.publish`).
        let staged = fingerprint == nil ? nil : PartialFiles.stagingPath(for: job.output)
        do throws(RenderError) {
            var summary = try renderer.render(sequence, to: staged ?? job.output) { rendered, music in
                if configuration.reportsProgress {
                    // A few times a second, and at every tenth of the song.
                    let now = Self.monotonicSeconds()
                    // (Past the music, in the tail, the decile stays at 10.)
                    let decile = min(10, Int(rendered / max(music, 0.001) * 10))
                    if now - lastReport >= 0.1 || decile != lastDecile {
                        lastReport = now
                        lastDecile = decile
                        post(.progress(job, renderedSeconds: rendered, musicSeconds: music))
                    }
                }
                return !isCancelled()
            }
            let elapsed = Self.monotonicSeconds() - started
            if let staged {
                do throws(POSIXReason) { try PartialFiles.publish(staged: staged, as: job.output) } catch {
                    unlink(staged)
                    let reason = BatchError.cannotWrite(path: job.output, reason: error.description)
                    return finish(job, .failed(reason: reason.description))
                }
                summary.outputPath = job.output
            }
            if let fingerprint {
                // The output is finished whatever happens to its ledger entry.
                do throws(BatchError) {
                    try configuration.ledger?.record(
                        job.output, fingerprint, input: job.input, seconds: summary.seconds)
                } catch {
                    post(.ledgerNotWritten(job, error))
                }
            }
            if let staged { unlink(staged) }
            if let target = options.loudness, let measured = summary.loudness, abs(measured - target.integrated) > 0.5 {
                post(.loudnessOutOfReach(job, target: target, measured: measured))
            }
            finish(job, .rendered(summary, elapsedSeconds: elapsed))
        } catch {
            if case .cancelled = error { return finish(job, .cancelled) }
            // A failure names the output, not the name it was staged under.
            let reason = error.description
            finish(job, .failed(reason: staged.map { reason.replacing($0, with: job.output) } ?? reason))
        }
    }

    private func finish(_ job: BatchJob, _ outcome: BatchOutcome) {
        if case .failed(let reason) = outcome, let log = configuration.failureLog {
            do { try log.append(input: job.input, output: job.output, origin: job.origin, error: reason) } catch {
                post(.failureNotLogged(error))
            }
        }
        state.withLock { state in
            state.summary.finished += 1
            switch outcome {
            case .rendered(let summary, _):
                state.summary.rendered += 1
                state.summary.audioSeconds += summary.seconds
            case .skipped: state.summary.skipped += 1
            case .failed: state.summary.failed += 1
            case .cancelled: state.summary.cancelled = true
            }
            var counts = state.summary
            counts.elapsedSeconds = Self.monotonicSeconds() - state.started
            state.events.append(.finished(job, outcome, counts))
        }
        wake.signal()
    }

    /// A renderer for the font stack `fonts` with `options`, sharing the stack's one loaded copy.
    private func renderer(fonts paths: [String], options: RenderOptions) throws(SoundFontError) -> OfflineRenderer {
        try fonts.withLock { loaded throws(SoundFontError) in
            if let renderer = loaded[paths] { return OfflineRenderer(sharingSoundFontOf: renderer, options: options) }
            let renderer = try OfflineRenderer(soundFonts: paths, options: options)
            loaded[paths] = renderer
            return renderer
        }
    }

    /// Why the job's output may not be written, if it may not: it is an input, or it exists and is not
    /// the batch's own to replace.
    private func outputProblem(_ job: BatchJob) -> BatchError? {
        guard let identity = FileIdentity(path: job.output) else { return nil }
        if let input = inputFiles[identity] { return .outputIsInput(path: job.output, input: input) }
        if configuration.replacesExistingOutputs { return nil }
        if configuration.ledger?.owns(output: job.output, input: job.input) == true { return nil }
        if publishedUnrecorded.withLock({ $0.contains(identity) }) { return nil }
        return .outputExists(path: job.output)
    }

    /// "path:size:mtime".
    static func identity(ofFont path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return path }
        return "\(path):\(info.st_size):\(info.st_mtim.tv_sec)"
    }

    static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A file by its device and inode: the same file whatever path names it.
struct FileIdentity: Hashable {
    var device: UInt64
    var inode: UInt64

    /// The file at `path` (links followed), or nil if there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
