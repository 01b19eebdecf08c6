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

    /// Frames `range` of `audio` through SoundTouch (cleared first, flushed after), exactly
    /// `length` frames long (the flush pads its last segment with silence; cut, or padded with it).
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
        soundtouch_flush(handle)
        drain()
        output = Array(output.prefix(length * channels))
        if output.count < length * channels { output += [Float](repeating: 0, count: length * channels - output.count) }
        return output
    }

    /// Attacks, as frame indices: 5 ms windows of the first difference of the channels' mean (a
    /// high-pass that weights attacks) whose energy is 10 dB above the 50 ms before and above
    /// −60 dBFS, at least 50 ms apart; each placed a millisecond before the window's largest step.
    static func onsets(in audio: AudioFile.Buffer) -> [Int] {
        let channels = max(1, audio.channelCount)
        let window = max(1, Int(0.005 * audio.sampleRate))
        let windows = audio.frameCount / window
        guard windows > 2 else { return [] }
        var energy = [Double](repeating: 0, count: windows)
        var peak = [Int](repeating: 0, count: windows)
        var previous = 0.0
        for index in 0..<windows {
            var (sum, largest) = (0.0, -1.0)
            for frame in (index * window)..<((index + 1) * window) {
                var mean = 0.0
                for channel in 0..<channels { mean += Double(audio.samples[frame * channels + channel]) }
                mean /= Double(channels)
                let step = mean - previous
                previous = mean
                sum += step * step
                if abs(step) > largest { (largest, peak[index]) = (abs(step), frame) }
            }
            energy[index] = sum
        }
        let floor = Double(window) * 1e-6
        var found: [Int] = []
        var last = -100
        for index in 1..<windows where index - last >= 10 && energy[index] > floor {
            let before = energy[max(0, index - 10)..<index]
            let average = before.reduce(0, +) / Double(before.count)
            if energy[index] > 10 * average {
                let onset = max(1, peak[index] - Int(0.001 * audio.sampleRate))
                if onset > (found.last ?? 0) {
                    found.append(onset)
                    last = index
                }
            }
        }
        return found
    }
}
