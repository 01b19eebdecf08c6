import AudioGraph
import CSndFile

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a long render to an audio file a quantum at a time, through a temporary file in the same
/// folder that is renamed to the final name only by `finish()`. An interrupted or failed write
/// leaves no file under the final name (and `cancel()` or deinit removes the temporary one).
public final class AudioFileWriter {
    /// The final file name; a file appears there only when `finish()` succeeds.
    public let path: String
    /// The hidden file written until `finish()` renames it (`.NAME.partial-PID` in the same folder);
    /// `cancel()`, deinit or a failed `finish()` removes it.
    public let temporaryPath: String
    /// Channels in the file; `write(_:from:frameCount:)` repeats a buffer's last channel for missing
    /// ones.
    public let channelCount: Int
    private var file: OpaquePointer?
    private var interleaved: [Float] = []
    /// Frames appended so far (each frame is `channelCount` samples).
    public private(set) var framesWritten = 0
    /// The most frames the format can hold (AIFF: 4 GiB of data; unlimited otherwise).
    let frameLimit: Int

    /// Opens the temporary file; the format follows `path`'s extension: .wav (written as RF64 when
    /// its data passes 4 GiB, a plain WAV otherwise), .flac, .ogg, .aiff (at most 4 GiB).
    public init(
        path: String, sampleRate: Double, channelCount: Int = 2, encoding: AudioFile.Encoding = .s16
    ) throws(AudioFileError) {
        var major = try AudioFile.majorFormat(forPath: path)
        // A WAV's RIFF sizes are 32-bit: a render past 4 GiB is written as RF64 (EBU Tech 3306),
        // which libsndfile turns back into a plain WAV on closing when the data stayed smaller.
        if major == Int32(SF_FORMAT_WAV) { major = Int32(SF_FORMAT_RF64) }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.rounded())
        info.channels = Int32(channelCount)
        info.format = major | AudioFile.subtype(major: major, encoding: encoding)
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedFormat(path: path, reason: "\(encoding.rawValue) at \(Int(sampleRate)) Hz")
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporaryPath = "\(directory).\(name).partial-\(getpid())"
        guard let handle = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            let reason = String(cString: sf_strerror(nil))
            throw .cannotOpen(
                path: path,
                reason: reason.contains("No such file") || reason.contains("ermission")
                    ? reason : "cannot create \(temporaryPath): \(reason)")
        }
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        if major == Int32(SF_FORMAT_RF64) { sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE)) }
        // AIFF's sizes are 32-bit too and it has no 64-bit form: such a file stops before it would
        // pass 4 GiB (its header included) with an error, never a file readers see cut short.
        if major == Int32(SF_FORMAT_AIFF) {
            let bytes = encoding == .s16 ? 2 : encoding == .s24 ? 3 : 4
            frameLimit = (Int(UInt32.max) - 65_536) / (bytes * channelCount)
        } else {
            frameLimit = .max
        }
        self.path = path
        self.channelCount = channelCount
        file = handle
    }

    deinit { cancel() }

    /// Appends `frameCount` frames of `buffer`, from frame `start` on.
    public func write(_ buffer: AudioBuffer, from start: Int = 0, frameCount: Int) throws(AudioFileError) {
        if interleaved.count < frameCount * channelCount {
            interleaved = [Float](repeating: 0, count: frameCount * channelCount)
        }
        for channel in 0..<channelCount {
            let source = buffer.channel(min(channel, buffer.channelCount - 1)) + start
            for frame in 0..<frameCount { interleaved[frame * channelCount + channel] = source[frame] }
        }
        try write(frames: frameCount, from: interleaved)
    }

    /// Appends interleaved frames (`samples.count / channelCount` of them).
    public func write(interleaved samples: [Float]) throws(AudioFileError) {
        try write(frames: samples.count / channelCount, from: samples)
    }

    private func write(frames frameCount: Int, from samples: [Float]) throws(AudioFileError) {
        guard let file else { throw .writeFailed(path: path, reason: "the file is closed") }
        guard framesWritten + frameCount <= frameLimit else {
            throw .writeFailed(
                path: path, reason: "an AIFF file holds at most 4 GiB of audio; use .wav (RF64 past 4 GiB) or .flac")
        }
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(frameCount)) }
        guard written == sf_count_t(frameCount) else {
            throw .writeFailed(path: path, reason: String(cString: sf_strerror(file)))
        }
        framesWritten += frameCount
    }

    /// Closes the file and gives it its final name.
    public func finish() throws(AudioFileError) {
        guard let handle = file else { throw .writeFailed(path: path, reason: "the file is closed") }
        file = nil
        guard sf_close(handle) == 0 else {
            unlink(temporaryPath)
            throw .writeFailed(path: path, reason: "closing failed")
        }
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .writeFailed(path: path, reason: reason)
        }
    }

    /// Abandons the file: closes and removes the temporary file.
    public func cancel() {
        guard let handle = file else { return }
        file = nil
        sf_close(handle)
        unlink(temporaryPath)
    }
}
