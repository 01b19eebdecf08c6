import AudioFiles
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
                    let gain = fadeGain(framesLeft: length - frame, over: fade)
                    for channel in 0..<channels { piece[frame * channels + channel] *= gain }
                }
            }
            output += piece
        }
        return AudioFile.Buffer(samples: output, channelCount: channels, sampleRate: audio.sampleRate)
    }

    /// Frames `range` of `audio` through SoundTouch (cleared first), exactly `length` frames long:
    /// its last segments pushed out with a `PieceTail` (for at least its starting batch, and
    /// 200 blocks as its own flush), then cut, or padded with silence.
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
        var tail = PieceTail(sampleRate: audio.sampleRate, pieceFrames: range.count)
        var block = [Float](repeating: 0, count: PieceTail.blockFrames * channels)
        let startingBatch = Int(soundtouch_getSetting(handle, initialLatencySetting))
        let pushes = max(200, 2 * startingBatch / PieceTail.blockFrames + 8)
        for _ in 0..<pushes where output.count < length * channels {
            block.withUnsafeMutableBufferPointer { block in
                tail.fill(block.baseAddress!, channels: channels) { back, channel in
                    audio.samples[(range.upperBound - 1 - back) * channels + channel]
                }
            }
            soundtouch_putSamples(handle, block, UInt32(PieceTail.blockFrames))
            drain()
        }
        output = Array(output.prefix(length * channels))
        if output.count < length * channels { output += [Float](repeating: 0, count: length * channels - output.count) }
        return output
    }

    /// SoundTouch's `SETTING_NOMINAL_INPUT_SEQUENCE`: the input frames one segment takes.
    static let nominalInputSequenceSetting: Int32 = 6
    /// SoundTouch's `SETTING_INITIAL_LATENCY`: the input frames it takes before its first output
    /// (its starting batch).
    static let initialLatencySetting: Int32 = 8

    /// The gain of a fade `over` frames, `framesLeft` frames before its end (1 … `over`).
    static func fadeGain(framesLeft: Int, over fade: Int) -> Float { Float(framesLeft) / Float(fade + 1) }

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

/// What pushes a piece's last segments out of SoundTouch, in blocks: the piece's last 20 ms played
/// back and forth (0, 1, … frames back from its last frame, then forth again). Silence would make
/// SoundTouch put out silence where its segments skip ahead (up to 9 ms before each attack).
/// Allocation-free: the node fills its blocks on the audio thread.
struct PieceTail {
    /// Frames per block pushed.
    static let blockFrames = 128
    /// How far back it reaches, in frames: 20 ms, or the whole piece if shorter.
    let span: Int
    private var step = 0

    init(sampleRate: Double, pieceFrames: Int) { span = min(Int(0.02 * sampleRate), pieceFrames) }

    /// Fills `block` with its next `blockFrames` interleaved frames of `channels` channels:
    /// `sample(back, channel)` is the piece's sample `back` frames before its last (silence for
    /// an empty piece).
    mutating func fill(
        _ block: UnsafeMutablePointer<Float>, channels: Int, sample: (_ back: Int, _ channel: Int) -> Float
    ) {
        for frame in 0..<Self.blockFrames {
            let phase = span > 0 ? step % (2 * span) : 0
            let back = phase < span ? phase : 2 * span - 1 - phase
            for channel in 0..<channels { block[frame * channels + channel] = span > 0 ? sample(back, channel) : 0 }
            step += 1
        }
    }
}
