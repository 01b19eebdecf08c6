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
/// WSOLA alone repeats the segments that hold attacks when it slows down and skips them when it
/// speeds up. So the audio is cut at its onsets (`onsets(in:)`: jumps of 10 dB in the energy of
/// its first difference) and each piece is stretched on its own and placed at its onset's time
/// divided by the rate, with a millisecond's fade where the next attack cuts in: every attack
/// comes out once, where it belongs (a click train's onsets within 3 ms from rate 0.25 to 4).
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
        guard soundtouch_setChannels(handle, UInt32(channels)) != 0 else {
            throw .unsupportedFormat(path: "timepitch", reason: "SoundTouch takes 1 to 16 channels, not \(channels)")
        }
        soundtouch_setSampleRate(handle, UInt32(audio.sampleRate.rounded()))
        soundtouch_setTempo(handle, Float(rate))
        soundtouch_setPitch(handle, Float(pow(2, cents / 1_200)))
        // Each stretch between two onsets on its own, placed where its onset belongs: WSOLA alone
        // would repeat or skip the segments that hold the attacks.
        let boundaries = [0] + onsets(in: audio) + [audio.frameCount]
        let fade = Int(0.001 * audio.sampleRate)
        var output: [Float] = []
        output.reserveCapacity((Int(Double(audio.frameCount) / rate) + 1) * channels)
        for (start, end) in zip(boundaries, boundaries.dropFirst()) {
            let length = Int((Double(end) / rate).rounded()) - Int((Double(start) / rate).rounded())
            var piece = stretch(audio, start..<end, handle: handle, channels: channels, length: length)
            // A millisecond's fade where the next attack cuts in.
            if end < audio.frameCount {
                for frame in max(0, length - fade)..<length {
                    let gain = Float(length - frame) / Float(fade + 1)
                    for channel in 0..<channels { piece[frame * channels + channel] *= gain }
                }
            }
            output += piece
        }
        return AudioFile.Buffer(samples: output, channelCount: channels, sampleRate: audio.sampleRate)
    }

    /// Frames `range` of `audio` through SoundTouch (cleared first), exactly `length` frames long:
    /// its last segments pushed out with the range's last 20 ms played back and forth (at most
    /// 200 blocks of 128 frames, as its own flush; silence would make it put out silence where
    /// its segments skip ahead), then cut, or padded with silence.
    private static func stretch(
        _ audio: AudioFile.Buffer, _ range: Range<Int>, handle: UnsafeMutableRawPointer, channels: Int, length: Int
    ) -> [Float] {
        soundtouch_clear(handle)
        var output: [Float] = []
        output.reserveCapacity((length + 8_192) * channels)
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
            var position = range.lowerBound
            while position < range.upperBound {
                let count = min(8_192, range.upperBound - position)
                soundtouch_putSamples(handle, samples.baseAddress! + position * channels, UInt32(count))
                position += count
                drain()
            }
        }
        let span = min(Int(0.02 * audio.sampleRate), range.count)
        var block = [Float](repeating: 0, count: 128 * channels)
        var step = 0
        for _ in 0..<200 where output.count < length * channels && span > 0 {
            for frame in 0..<128 {
                let source = (range.upperBound - 1 - mirrored(step, over: span)) * channels
                for channel in 0..<channels { block[frame * channels + channel] = audio.samples[source + channel] }
                step += 1
            }
            soundtouch_putSamples(handle, block, 128)
            drain()
        }
        output = Array(output.prefix(length * channels))
        if output.count < length * channels { output += [Float](repeating: 0, count: length * channels - output.count) }
        return output
    }

    /// How far back from a stretch's last frame the `step`th frame played back and forth over
    /// its last `span` frames lies: 0, 1, … `span` − 1, `span` − 1, … 0, 0, 1, …
    static func mirrored(_ step: Int, over span: Int) -> Int {
        let phase = step % (2 * span)
        return phase < span ? phase : 2 * span - 1 - phase
    }

    /// Attacks, as frame indices (`OnsetDetector` over the channels' mean): where the energy of
    /// the first difference jumps by 10 dB, at least 50 ms apart.
    static func onsets(in audio: AudioFile.Buffer) -> [Int] {
        let channels = max(1, audio.channelCount)
        var detector = OnsetDetector(sampleRate: audio.sampleRate)
        guard audio.frameCount / detector.window > 2 else { return [] }
        var found: [Int] = []
        for frame in 0..<audio.frameCount {
            var mean = 0.0
            for channel in 0..<channels { mean += Double(audio.samples[frame * channels + channel]) }
            if let onset = detector.add(mean / Double(channels)) { found.append(onset) }
        }
        return found
    }
}
