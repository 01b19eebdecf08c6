import AudioFiles
import CSampleRate

extension AudioFile.Buffer {
    /// The audio played at `rate` (0.25 … 4), the pitch following, as tape: resampled by
    /// libsamplerate (best-quality sinc) from `rate` × its sample rate to its sample rate, so it
    /// lasts 1/rate as long (to the frame). Any number of channels. Allocates.
    public func varispeed(rate: Double) throws(AudioFileError) -> AudioFile.Buffer {
        guard (0.25...4).contains(rate) else {
            throw .unsupportedFormat(path: "varispeed", reason: "rate \(rate) is outside 0.25…4")
        }
        let channels = max(1, channelCount)
        guard frameCount > 0, rate != 1 else { return self }
        let expected = Int((Double(frameCount) / rate).rounded())
        var (status, output, produced) = Self.convert(
            samples, frames: frameCount, channels: channels, ratio: 1 / rate,
            converter: Int32(SRC_SINC_BEST_QUALITY), capacity: expected + 16)
        guard status == 0 else {
            throw .readFailed(path: "varispeed", reason: String(cString: src_strerror(status)))
        }
        output.removeLast(output.count - min(produced, expected) * channels)
        output += [Float](repeating: 0, count: (expected - min(produced, expected)) * channels)
        return AudioFile.Buffer(samples: output, channelCount: channels, sampleRate: sampleRate)
    }
}
