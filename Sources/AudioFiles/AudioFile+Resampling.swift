import CSampleRate

extension AudioFile.Buffer {
    /// libsamplerate's one-call conversion of `frames` interleaved frames at `ratio` (output
    /// frames per input frame) into room for `capacity` frames: its status, the output and the
    /// frames it produced.
    package static func convert(
        _ input: [Float], frames: Int, channels: Int, ratio: Double, converter: Int32, capacity: Int
    ) -> (status: Int32, output: [Float], produced: Int) {
        var output = [Float](repeating: 0, count: capacity * channels)
        var produced = 0
        let status: Int32 = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                var data = SRC_DATA()
                data.data_in = source.baseAddress
                data.input_frames = frames
                data.data_out = destination.baseAddress
                data.output_frames = capacity
                data.src_ratio = ratio
                data.end_of_input = 1
                let status = src_simple(&data, converter, Int32(channels))
                produced = data.output_frames_gen
                return status
            }
        }
        return (status, output, produced)
    }
}
