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
        var output = [Float](repeating: 0, count: (expected + 16) * channels)
        var produced = 0
        let status: Int32 = samples.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                var data = SRC_DATA()
                data.data_in = source.baseAddress
                data.input_frames = frameCount
                data.data_out = destination.baseAddress
                data.output_frames = expected + 16
                data.src_ratio = 1 / rate
                data.end_of_input = 1
                let status = src_simple(&data, Int32(SRC_SINC_BEST_QUALITY), Int32(channels))
                produced = data.output_frames_gen
                return status
            }
        }
        guard status == 0 else {
            throw .readFailed(path: "varispeed", reason: String(cString: src_strerror(status)))
        }
        output.removeLast(output.count - min(produced, expected) * channels)
        output += [Float](repeating: 0, count: (expected - min(produced, expected)) * channels)
        return AudioFile.Buffer(samples: output, channelCount: channels, sampleRate: sampleRate)
    }
}
