import AudioGraph
import CSndFile
import PianolaSupport

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
    /// Rounds (and, asked to, dithers) the samples of a 16- or 24-bit file.
    private let quantizer: SampleQuantizer
    /// The folder the file is written in (for telling a full disk from other failures).
    private let folder: String
    /// Converts the audio to `fileSampleRate` where the format cannot hold the rate given.
    private let resampler: StreamingResampler?
    /// The kind of file, from the path's extension.
    public let fileType: AudioFile.FileType
    /// The file's sample rate: the rate given, unless the format cannot hold it
    /// (`AudioFile.FileType.fileSampleRate(for:)`).
    public let fileSampleRate: Double
    private var interleaved: [Float] = []
    /// Frames appended so far (each frame is `channelCount` samples), at the rate given (not
    /// `fileSampleRate`).
    public private(set) var framesWritten = 0
    /// The most frames the file can hold: 4 GiB of data in a plain WAV or an AIFF, unlimited in
    /// RF64, FLAC, Ogg and raw.
    let frameLimit: Int

    /// Opens the temporary file; the format follows `path`'s extension (`AudioFile.FileType`: .wav,
    /// .flac, .ogg, .opus, .mp3, .aiff, .raw for headerless little-endian samples).
    ///
    /// WAV and AIFF sizes are 32-bit. Give `expectedFrameCount` (at most how many frames will be
    /// written) when it can be large: a .wav whose data could pass 4 GiB is then written as RF64
    /// (EBU Tech 3306; libsndfile makes it a plain WAV on closing if it stayed smaller). Otherwise a
    /// .wav is a plain RIFF WAVE file, and a write that would take a WAV or AIFF past 4 GiB throws
    /// instead of leaving a file whose sizes wrapped (readers would see it cut short).
    ///
    /// A 16- or 24-bit file holds each sample rounded to the nearest step (silence stays 0); with
    /// `dither`, TPDF dither of ±1 step (the same noise for every file: renders stay reproducible)
    /// is added first, trading a low noise floor for the rounding's distortion on quiet passages.
    ///
    /// MP3, Opus and Ogg Vorbis files are as compressed as `compression` says. An Opus or MP3 file
    /// at a rate its encoder cannot take is written at `FileType.fileSampleRate(for:)` instead
    /// (44.1 kHz into Opus at 48 kHz), converted as it is written (libsamplerate, medium-quality
    /// sinc); `fileSampleRate` says which.
    ///
    /// - Throws: `AudioFileError.unsupportedFormat` for an extension of no `FileType`, an encoding,
    ///   a channel count or a rate the format cannot hold (an MP3 of more than two channels, s24 or
    ///   f32 for MP3 and Opus), or a `compression` that does not fit it; `cannotOpen` or `noSpace`
    ///   when the temporary file cannot be created.
    public init(
        path: String, sampleRate: Double, channelCount: Int = 2, encoding: AudioFile.Encoding = .s16,
        expectedFrameCount: Int? = nil, dither: Bool = false, compression: AudioFile.Compression = .automatic
    ) throws(AudioFileError) {
        let type = try AudioFile.FileType(path: path)
        var major = type.majorFormat
        let bytesPerFrame = (encoding == .s16 ? 2 : encoding == .s24 ? 3 : 4) * channelCount
        // The data a 32-bit RIFF/FORM size can count, less room for the header's chunks.
        let sizeLimitedFrames = (Int(UInt32.max) - 65_536) / bytesPerFrame
        if major == Int32(SF_FORMAT_WAV), let expected = expectedFrameCount, expected > sizeLimitedFrames {
            major = Int32(SF_FORMAT_RF64)
        }
        let fileRate = type.fileSampleRate(for: sampleRate)
        if let problem = type.problem(
            encoding: encoding, channelCount: channelCount, fileRate: fileRate, compression: compression)
        {
            throw .unsupportedFormat(path: path, reason: problem)
        }
        var info = SF_INFO()
        info.samplerate = Int32(fileRate)
        info.channels = Int32(channelCount)
        info.format = major | type.subtype(encoding)
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedFormat(path: path, reason: "\(encoding.rawValue) at \(Int(sampleRate)) Hz")
        }
        resampler = try StreamingResampler.needed(
            from: sampleRate, to: fileRate, channelCount: channelCount, writing: path)
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporaryPath = "\(directory).\(name).partial-\(getpid())"
        folder = directory.isEmpty ? "." : directory
        guard let handle = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            // libsndfile may have created the file before failing (a full disk: FLAC and Ogg
            // then speak of their encoders): nothing is left behind, and a full disk says so.
            let full = FileSystemSpace.isOutOfSpace(errno: errno, folder: directory)
            unlink(temporaryPath)
            if full { throw .noSpace(path: path) }
            let reason = String(cString: sf_strerror(nil))
            throw .cannotOpen(
                path: path,
                reason: reason.contains("No such file") || reason.contains("ermission")
                    ? reason : "cannot create \(temporaryPath): \(reason)")
        }
        guard compression.apply(to: handle, type: type, fileRate: fileRate, channelCount: channelCount) else {
            let reason = String(cString: sf_strerror(handle))
            sf_close(handle)
            unlink(temporaryPath)
            throw .unsupportedFormat(path: path, reason: "libsndfile refused the compression \(compression): \(reason)")
        }
        if fileRate != sampleRate.rounded() { type.recordOriginalRate(sampleRate, in: handle) }
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        if major == Int32(SF_FORMAT_RF64) { sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE)) }
        frameLimit = major == Int32(SF_FORMAT_WAV) || major == Int32(SF_FORMAT_AIFF) ? sizeLimitedFrames : .max
        self.path = path
        self.channelCount = channelCount
        fileType = type
        fileSampleRate = fileRate
        quantizer = SampleQuantizer(format: info.format, channels: channelCount, dither: dither)
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
                path: path,
                reason:
                    "WAV and AIFF files hold at most 4 GiB of audio: use .flac (in code, expectedFrameCount makes an RF64 .wav)"
            )
        }
        if let resampler {
            let converted = samples.withUnsafeBufferPointer {
                resampler.process($0.baseAddress, frames: frameCount, end: false)
            }
            try encode(converted.count / channelCount, from: converted, into: file)
        } else {
            try encode(frameCount, from: samples, into: file)
        }
        framesWritten += frameCount
    }

    /// Hands `frameCount` frames at the file's rate to libsndfile.
    private func encode(_ frameCount: Int, from samples: [Float], into file: OpaquePointer) throws(AudioFileError) {
        guard frameCount > 0 else { return }
        errno = 0
        let quantizer = quantizer
        let channels = channelCount
        let written = samples.withUnsafeBufferPointer { buffer -> sf_count_t in
            guard let base = buffer.baseAddress else { return 0 }
            return quantizer.write(file, base, frames: frameCount, channels: channels)
        }
        guard written == sf_count_t(frameCount) else {
            if FileSystemSpace.isOutOfSpace(errno: errno, folder: folder) { throw .noSpace(path: path) }
            throw .writeFailed(path: path, reason: String(cString: sf_strerror(file)))
        }
    }

    /// Closes the file and gives it its final name.
    public func finish() throws(AudioFileError) {
        guard let handle = file else { throw .writeFailed(path: path, reason: "the file is closed") }
        if let resampler {
            // The converter's last frames (its filter's delay).
            let rest = resampler.process(nil, frames: 0, end: true)
            do { try encode(rest.count / channelCount, from: rest, into: handle) } catch {
                cancel()
                throw error
            }
        }
        file = nil
        errno = 0
        guard sf_close(handle) == 0 else {
            let full = FileSystemSpace.isOutOfSpace(errno: errno, folder: folder)
            unlink(temporaryPath)
            throw full ? .noSpace(path: path) : .writeFailed(path: path, reason: "closing failed")
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
