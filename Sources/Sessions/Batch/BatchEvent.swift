import SMF

/// What a `BatchRunner` reports as it goes, on the thread that called `run`.
public enum BatchEvent: Sendable {
    /// A job's render has reached `renderedSeconds` of audio, of a song `musicSeconds` long (a
    /// few times a second, when the runner's configuration asks for it).
    case progress(BatchJob, renderedSeconds: Double, musicSeconds: Double)
    /// The job's MIDI file was damaged: `count` defects were recovered (`MIDIFile.read` lists them).
    case defectsRecovered(BatchJob, count: Int)
    /// Silences that only damaged delta times made were cut from the job's song before it
    /// rendered (`MIDIFile.cuttingDefectGaps()`): each gap, with its length in seconds.
    case defectGapsCut(BatchJob, [(gap: MIDIFile.DefectGap, seconds: Double)])
    /// The job's loudness target could not be reached under its true-peak ceiling.
    case loudnessOutOfReach(BatchJob, target: LoudnessTarget, measured: Double)
    /// A job is over, with the batch's counts so far.
    case finished(BatchJob, BatchOutcome, BatchSummary)
    /// A failure could not be written to the failure log.
    case failureNotLogged(BatchError)
    /// The job's output was rendered, but its ledger entry could not be written (a later run
    /// renders it again).
    case ledgerNotWritten(BatchJob, BatchError)
}

/// How a job ended.
public enum BatchOutcome: Sendable {
    /// Rendered, in `elapsedSeconds` of wall-clock time.
    case rendered(RenderSummary, elapsedSeconds: Double)
    /// Already done: the ledger records the output from the same input, font and settings.
    case skipped
    /// Not rendered; the reason says what and where.
    case failed(reason: String)
    /// Interrupted: nothing was written.
    case cancelled
}

/// A batch's counts: so far, or when it is over.
public struct BatchSummary: Sendable, Hashable {
    /// The jobs of the batch, including manifest lines that could not become jobs.
    public var total = 0
    /// Jobs over, however they ended.
    public var finished = 0
    /// Jobs rendered, skipped as already done (by the ledger), and failed.
    public var rendered = 0
    /// Jobs skipped as already done: the ledger records their output from the same input, font and settings.
    public var skipped = 0
    /// Jobs that failed, manifest lines that could not become jobs included.
    public var failed = 0
    /// Seconds of audio rendered.
    public var audioSeconds = 0.0
    /// Wall-clock seconds since the batch started.
    public var elapsedSeconds = 0.0
    /// True when the batch was interrupted before every job was done.
    public var cancelled = false
}
