import CSoundTouch

#if canImport(Glibc)
    import Glibc
#endif

/// Time-stretch and pitch-shift apart, the counterpart of AVAudioUnitTimePitch, through
/// SoundTouch (LGPL-2.1, linked dynamically; Debian's `libsoundtouch-dev`): its tempo changer
/// (WSOLA: overlapping segments joined where they correlate best) sets the duration, and its rate
/// transposer (resampling with an anti-alias filter) the pitch, so a sine's pitch moves by exactly
/// the cents asked. Rubber Band, the other field library, is GPL and cannot link into an
/// Apache-2.0 program.
///
/// ```swift
/// let slower = try TimePitch.process(take, rate: 0.8, cents: 300)  // 1.25 × as long, 3 semitones up
/// ```
public enum TimePitch {
    /// The rates accepted (AVAudioUnitTimePitch's): 1/32 … 32. SoundTouch is at its best within
    /// 0.5 … 2; far beyond, its segments repeat or drop audibly.
    public static let rates = (1.0 / 32)...32.0
    /// The pitch shifts accepted, cents: −2400 … 2400.
    public static let pitches = -2400.0...2400.0

    /// `audio` at `rate` (2: half as long) and shifted by `cents`, as long as the input divided
    /// by the rate (to the frame). Allocates; not for the audio thread.
    public static func process(
        _ audio: AudioFile.Buffer, rate: Double, cents: Double
    ) throws(AudioFileError) -> AudioFile.Buffer {
        guard rates.contains(rate), pitches.contains(cents) else {
            throw .unsupportedFormat(
                path: "timepitch", reason: "rate \(rate) or pitch \(cents) cents outside 1/32…32 and −2400…2400")
        }
        let channels = max(1, audio.channelCount)
        guard audio.frameCount > 0 else { return audio }
        guard let handle = soundtouch_createInstance() else {
            throw .readFailed(path: "timepitch", reason: "SoundTouch could not make an instance")
        }
        defer { soundtouch_destroyInstance(handle) }
        soundtouch_setChannels(handle, UInt32(channels))
        soundtouch_setSampleRate(handle, UInt32(audio.sampleRate.rounded()))
        soundtouch_setTempo(handle, Float(rate))
        soundtouch_setPitch(handle, Float(pow(2, cents / 1_200)))
        let expected = Int((Double(audio.frameCount) / rate).rounded())
        var output: [Float] = []
        output.reserveCapacity((expected + 8_192) * channels)
        var chunk = [Float](repeating: 0, count: 8_192 * channels)
        func drain() {
            while true {
                let received = chunk.withUnsafeMutableBufferPointer { buffer in
                    Int(soundtouch_receiveSamples(handle, buffer.baseAddress, 8_192))
                }
                if received == 0 { break }
                output += chunk[0..<(received * channels)]
            }
        }
        audio.samples.withUnsafeBufferPointer { samples in
            var position = 0
            while position < audio.frameCount {
                let count = min(8_192, audio.frameCount - position)
                soundtouch_putSamples(handle, samples.baseAddress! + position * channels, UInt32(count))
                position += count
                drain()
            }
        }
        soundtouch_flush(handle)
        drain()
        // Exactly the length the rate asks for: the flush pads its last segment with silence.
        output = Array(output.prefix(expected * channels))
        if output.count < expected * channels {
            output += [Float](repeating: 0, count: expected * channels - output.count)
        }
        return AudioFile.Buffer(samples: output, channelCount: channels, sampleRate: audio.sampleRate)
    }
}
