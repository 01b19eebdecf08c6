import AudioGraph
import CSndFile
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a node's output to an audio file while the engine runs, without the render thread ever
/// waiting for the disk: the tap copies each quantum into a preallocated lock-free ring
/// (`SampleRing`), and a writer thread drains the ring into the file.
///
/// The file is valid at all times: a recording is written under its final name, and the writer
/// brings the header up to date (and flushes the data to the disk) every `Settings.headerInterval`
/// seconds, so a crash or a power cut loses at most that much of a WAV, AIFF or raw file.
/// `finish()` completes it. If the disk cannot keep up, the frames the ring could not hold are
/// dropped and counted (`droppedFrameCount`); if the disk is full, writing stops, `failure` says
/// so and the file holds everything up to that point.
///
/// Install it with `AudioEngine.installTap(on:_:)` on any node, and end it with `finish()` (or
/// `deleteFiles()`): its writer thread runs, and keeps the tap alive, until then.
public final class AudioFileTap: AudioTap, @unchecked Sendable {
    /// The reason an ``AudioFileError/cannotOpen(path:reason:)`` gives for a file that exists
    /// without `Settings.overwrite`, for a caller to put in its own words (the `pianola` command
    /// names `--force`).
    public static let fileExistsReason = "the file exists (set AudioFileTap.Settings.overwrite to replace it)"

    /// How the file is written.
    public struct Settings: Sendable, Hashable {
        /// The samples' encoding (16-bit by default; Ogg is always Vorbis; Opus and MP3 take only the
        /// default). 16- and 24-bit samples are rounded to the nearest step.
        public var encoding: AudioFile.Encoding = .s16
        /// How much an MP3, Opus or Ogg Vorbis file is compressed (`automatic` for other files).
        public var compression: AudioFile.Compression = .automatic
        /// Add TPDF dither of ±1 step before rounding to 16 or 24 bits (ignored for floats and Ogg).
        public var dither = false
        /// Start a new numbered file (`take-001.wav`, `take-002.wav`, …) every this many frames; nil:
        /// one file. The parts follow each other without a gap or an overlap. At least 1 (`init` throws
        /// for less).
        public var splitFrames: Int?
        /// Replace an existing file; otherwise an existing file is an error and is left alone.
        public var overwrite = false
        /// Seconds of audio the ring holds while the disk is busy (4 096 frames at least, also for NaN).
        public var ringSeconds = 4.0
        /// Seconds between header updates (and flushes to the disk).
        public var headerInterval = 0.5
        /// Stop after this many frames (the tap then ignores the rest); nil: until `finish()`.
        public var frameLimit: Int?
        /// The file's sample rate; nil: the engine's, or for an Opus or MP3 file whose format cannot
        /// hold it, `AudioFile.FileType.fileSampleRate(for:)` (48 kHz for Opus from 44.1 kHz).
        /// Another rate is converted on the writer thread (libsamplerate, medium-quality sinc);
        /// `splitFrames` then counts the file's frames.
        public var fileSampleRate: Double?

        /// Settings with the defaults: 16-bit without dither, one file, no overwrite, a 4-second ring,
        /// headers every 0.5 s.
        public init() {}
    }

    /// The name given; with `splitFrames`, the parts are numbered from it (`files`).
    public let path: String
    /// Channels written (a tapped buffer with fewer repeats its last one).
    public let channelCount: Int
    /// The tapped engine's sample rate (frames taken are counted at it).
    public let sampleRate: Double
    /// The file's sample rate: `Settings.fileSampleRate`, or the engine's.
    public let fileSampleRate: Double
    /// The settings the tap was made with.
    public let settings: Settings
    private let ring: SampleRing
    private let major: Int32
    /// The kind of file, from the path's extension.
    public let fileType: AudioFile.FileType
    /// 0 paused, 1 recording, 2 stopped (for good).
    private let state = Atomic<Int>(0)
    private let accepted = Atomic<Int>(0)
    private let written = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let limit: Atomic<Int>
    private let shared = Mutex<(files: [String], failure: AudioFileError?)>(([], nil))
    private var writer: SystemThread?
    // Writer-thread state.
    private var file: OpaquePointer?
    /// Rounds (and dithers) the samples of the open part (writer thread).
    private var quantizer: SampleQuantizer?
    private var descriptor: Int32 = -1
    private var framesInFile = 0
    private var fileFrameLimit = Int.max
    private let resampler: StreamingResampler?
    private var updatesHeader: Bool { major == Int32(SF_FORMAT_WAV) || major == Int32(SF_FORMAT_AIFF) }

    /// Creates the file (the first part, with `splitFrames`) and starts the writer thread, paused:
    /// nothing is written before `record()`. Throws, creating nothing, if the format cannot be written,
    /// the folder cannot be written to, or the file exists (without `overwrite`).
    ///
    /// An MP3 or Opus file is always whole up to the last frame written (their frames stand alone);
    /// the length LAME's header gives an MP3 is written by `finish()`.
    ///
    /// - Throws: `AudioFileError.unsupportedFormat` for what `AudioFileWriter` refuses (an encoding,
    ///   channel count, file rate or compression the format cannot take), and too for a `channelCount` below 1, a sample rate
    ///   (the engine's or the file's) that is not a whole number of hertz from 1 to 2^31 − 1, or a
    ///   `splitFrames` below 1; `AudioFileError.writeFailed` when the system refuses the writer thread.
    ///   A `ringSeconds` too small, or NaN, makes the smallest ring (4 096 frames).
    public init(
        path: String, channelCount: Int, sampleRate: Double, settings: Settings = Settings()
    ) throws(AudioFileError) {
        let type = try AudioFile.FileType(path: path)
        let fileRate = (settings.fileSampleRate ?? type.fileSampleRate(for: sampleRate)).rounded()
        let rates = 1...Double(Int32.max)
        guard channelCount > 0, let channels = Int32(exactly: channelCount) else {
            throw .unsupportedFormat(path: path, reason: "\(channelCount) channels: a file needs 1 or more")
        }
        guard rates.contains(sampleRate.rounded()), rates.contains(fileRate) else {
            throw .unsupportedFormat(
                path: path, reason: "a sample rate of \(settings.fileSampleRate ?? sampleRate) Hz (1 Hz or more)")
        }
        if let split = settings.splitFrames, split < 1 {
            throw .unsupportedFormat(path: path, reason: "parts of \(split) frames: a part needs 1 or more")
        }
        self.path = path
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.settings = settings
        fileSampleRate = fileRate
        fileType = type
        major = type.majorFormat
        if let problem = type.problem(
            encoding: settings.encoding, channelCount: channelCount, fileRate: fileRate,
            compression: settings.compression)
        {
            throw .unsupportedFormat(path: path, reason: problem)
        }
        var info = SF_INFO()
        info.samplerate = Int32(fileRate)
        info.channels = channels
        info.format = major | type.subtype(settings.encoding)
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedFormat(
                path: path, reason: "\(settings.encoding.rawValue), \(channelCount) channels at \(Int(fileRate)) Hz")
        }
        resampler = try StreamingResampler.needed(
            from: sampleRate, to: fileRate, channelCount: channelCount, writing: path)
        limit = Atomic(settings.frameLimit ?? .max)
        let ringFrames = settings.ringSeconds * sampleRate
        // 4 096 to 2^31 − 1 frames (NaN fails the comparison: the smallest ring).
        ring = SampleRing(
            channelCount: channelCount, capacity: ringFrames > 4_096 ? Int(min(ringFrames, Double(Int32.max))) : 4_096)
        // Every part is checked now, not when a take reaches it minutes later.
        if settings.splitFrames != nil, !settings.overwrite,
            let existing = (2...999).lazy.map(partPath).first(where: { access($0, F_OK) == 0 })
        {
            throw .cannotOpen(path: existing, reason: Self.fileExistsReason)
        }
        try openPart(number: 1)
        do { writer = try SystemThread { [self] in runWriter() } } catch {
            closeFile()
            unlink(partPath(1))
            throw .writeFailed(path: path, reason: "cannot start the writer thread (\(error))")
        }
    }

    /// The name of part `number` (the path itself without splitting).
    public func partPath(_ number: Int) -> String {
        guard settings.splitFrames != nil else { return path }
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let dot = path[slash...].lastIndex(of: ".") ?? path.endIndex
        let digits = String(number)
        let padded = String(repeating: "0", count: max(0, 3 - digits.count)) + digits
        return "\(path[..<dot])-\(padded)\(path[dot...])"
    }

    /// Opens part `number` (writer thread, or `init`).
    private func openPart(number: Int) throws(AudioFileError) {
        let name = partPath(number)
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (settings.overwrite ? O_TRUNC : O_EXCL)
        let fd = open(name, flags, 0o644)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw .cannotOpen(path: name, reason: Self.fileExistsReason) }
            if FileSystemSpace.isOutOfSpace(errno: code, folder: Self.folder(of: name)) { throw .noSpace(path: name) }
            throw .cannotOpen(path: name, reason: String(cString: strerror(code)))
        }
        var info = SF_INFO()
        info.samplerate = Int32(fileSampleRate)
        info.channels = Int32(channelCount)
        info.format = major | fileType.subtype(settings.encoding)
        guard let handle = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            let full = FileSystemSpace.isOutOfSpace(errno: errno, folder: Self.folder(of: name))
            unlink(name)
            if full { throw .noSpace(path: name) }
            throw .cannotOpen(path: name, reason: String(cString: sf_strerror(nil)))
        }
        guard
            settings.compression.apply(
                to: handle, type: fileType, fileRate: fileSampleRate, channelCount: channelCount)
        else {
            let reason = String(cString: sf_strerror(handle))
            sf_close(handle)
            unlink(name)
            throw .unsupportedFormat(path: name, reason: "libsndfile refused the compression: \(reason)")
        }
        if fileSampleRate != sampleRate.rounded() { fileType.recordOriginalRate(sampleRate, in: handle) }
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        file = handle
        quantizer = SampleQuantizer(format: info.format, channels: channelCount, dither: settings.dither)
        descriptor = fd
        framesInFile = 0
        let bytesPerFrame = (settings.encoding == .s16 ? 2 : settings.encoding == .s24 ? 3 : 4) * channelCount
        fileFrameLimit =
            major == Int32(SF_FORMAT_WAV) || major == Int32(SF_FORMAT_AIFF)
            ? (Int(UInt32.max) - 65_536) / bytesPerFrame : .max
        shared.withLock { $0.files.append(name) }
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[...slash])
    }

    // MARK: Render thread

    /// Copies the quantum into the ring while recording (render thread; lock-free, allocates nothing).
    public func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime) {
        guard state.load(ordering: .relaxed) == 1 else { return }
        let done = accepted.load(ordering: .relaxed)
        let count = min(frameCount, limit.load(ordering: .relaxed) - done)
        if count > 0 {
            ring.write(buffer, frameCount: count)
            accepted.store(done + count, ordering: .relaxed)
        }
        if done + max(count, 0) >= limit.load(ordering: .relaxed) { state.store(2, ordering: .relaxed) }
    }

    // MARK: Control

    /// Starts (or resumes) taking the tapped node's output, from the next quantum on.
    public func record() {
        _ = state.compareExchange(expected: 0, desired: 1, ordering: .relaxed)
    }

    /// Stops taking audio once `frames` frames in all have been taken (from the start of the recording),
    /// as `Settings.frameLimit` does.
    public func stop(afterFrames frames: Int) {
        limit.store(frames, ordering: .relaxed)
    }

    /// Stops taking audio until `record()`; the file simply continues with what comes after.
    public func pause() {
        _ = state.compareExchange(expected: 1, desired: 0, ordering: .relaxed)
    }

    /// Whether quanta are being taken now.
    public var isRecording: Bool { state.load(ordering: .relaxed) == 1 }
    /// Whether the tap has stopped for good: `frameLimit` reached, a write failed, or `finish()`.
    public var isStopped: Bool { state.load(ordering: .relaxed) == 2 }
    /// Frames taken from the tapped node so far (paused quanta not counted; dropped ones counted).
    public var recordedFrameCount: Int { accepted.load(ordering: .relaxed) }
    /// Frames in the files so far (at `fileSampleRate`).
    public var writtenFrameCount: Int { written.load(ordering: .relaxed) }
    /// Frames lost because the disk did not keep up (the ring was full).
    public var droppedFrameCount: Int { ring.droppedFrameCount }
    /// The files written so far (one, or the parts with `splitFrames`).
    public var files: [String] { shared.withLock { $0.files } }
    /// Why writing stopped early (a full disk, a failed write), if it did.
    public var failure: AudioFileError? { shared.withLock { $0.failure } }
    /// Bytes on disk in the files so far.
    public var fileSize: Int {
        files.reduce(0) { total, name in
            var status = stat()
            return total + (stat(name, &status) == 0 ? Int(status.st_size) : 0)
        }
    }

    /// Stops taking audio, writes what the ring holds, completes the files and stops the writer.
    /// Stop the engine (or remove the tap) first, so that no quantum is in flight. Throws the
    /// failure that stopped writing early, if any (the files hold everything up to it). Calling it
    /// again does nothing more.
    public func finish() throws(AudioFileError) {
        state.store(2, ordering: .relaxed)
        stopRequested.store(true, ordering: .releasing)
        writer?.join()
        writer = nil
        if let failure { throw failure }
    }

    /// Finishes (as `finish()`, ignoring a failure) and removes every file written.
    public func deleteFiles() {
        _ = try? finish()
        for name in files { unlink(name) }
        shared.withLock { $0.files.removeAll() }
    }

    // MARK: Writer thread

    private func runWriter() {
        let chunk = 8_192
        var samples = [Float](repeating: 0, count: chunk * channelCount)
        var lastHeader = Self.now()
        var part = 1
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            var moved = 0
            while failure == nil {
                let count = samples.withUnsafeMutableBufferPointer {
                    ring.read(into: $0.baseAddress!, maximumFrames: chunk)
                }
                if count == 0 { break }
                moved += count
                if let resampler {
                    let converted = samples.withUnsafeBufferPointer {
                        resampler.process($0.baseAddress, frames: count, end: false)
                    }
                    writeFrames(converted, count: converted.count / channelCount, part: &part)
                } else {
                    writeFrames(samples, count: count, part: &part)
                }
            }
            if failure != nil {
                state.store(2, ordering: .relaxed)
                break
            }
            if Self.now() - lastHeader >= settings.headerInterval {
                lastHeader = Self.now()
                if let file {
                    // WAV and AIFF headers carry the length; libsndfile rewrites them in place. (For Ogg
                    // the same command starts a new stream in the middle of the file; FLAC's and raw
                    // files' headers have nothing to update.)
                    if updatesHeader { sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0) }
                    fdatasync(descriptor)
                }
            }
            if stopping && ring.availableFrames == 0 {
                // The converter's last frames (its filter's delay).
                if let resampler {
                    let rest = resampler.process(nil, frames: 0, end: true)
                    writeFrames(rest, count: rest.count / channelCount, part: &part)
                }
                break
            }
            // The ring holds seconds: waking ten times a second keeps the disk well ahead (and
            // costs a machine little).
            if moved == 0 { usleep(100_000) }
        }
        closeFile()
    }

    private func writeFrames(_ samples: [Float], count: Int, part: inout Int) {
        var offset = 0
        while offset < count {
            if let split = settings.splitFrames, framesInFile >= split {
                closeFile()
                part += 1
                do { try openPart(number: part) } catch {
                    shared.withLock { $0.failure = error }
                    return
                }
            }
            guard let file, let quantizer else { return }
            var frames = count - offset
            if let split = settings.splitFrames { frames = min(frames, split - framesInFile) }
            guard framesInFile + frames <= fileFrameLimit else {
                shared.withLock {
                    $0.failure = .writeFailed(
                        path: $0.files.last ?? path,
                        reason: "WAV and AIFF files hold at most 4 GiB: split it, or use .flac")
                }
                return
            }
            errno = 0
            let channels = channelCount
            let done = samples.withUnsafeBufferPointer { buffer -> sf_count_t in
                guard let base = buffer.baseAddress else { return 0 }
                return quantizer.write(file, base + offset * channels, frames: frames, channels: channels)
            }
            if done > 0 {
                framesInFile += Int(done)
                written.add(Int(done), ordering: .relaxed)
            }
            guard done == sf_count_t(frames) else {
                let name = files.last ?? path
                let full = FileSystemSpace.isOutOfSpace(errno: errno, folder: Self.folder(of: name))
                let reason = String(cString: sf_strerror(file))
                shared.withLock { $0.failure = full ? .noSpace(path: name) : .writeFailed(path: name, reason: reason) }
                return
            }
            offset += frames
        }
    }

    private func closeFile() {
        guard let handle = file else { return }
        file = nil
        sf_close(handle)  // writes the final header; closes the descriptor
        descriptor = -1
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
