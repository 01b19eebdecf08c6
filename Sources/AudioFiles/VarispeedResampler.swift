import AudioGraph
import CSampleRate

#if canImport(Glibc)
    import Glibc
#endif

/// Varispeed on the audio thread: a stereo libsamplerate converter (medium-quality sinc, 97 dB
/// signal-to-noise) that writes frames at `1 / rate` output frames per input frame, so a rate of
/// 1.5 plays 1.5 times as fast and a fifth higher. It pulls its input from a source in chunks
/// (`render`: a player, a varispeed node), or takes it as it comes (`convert`: the time-pitch
/// node's transposer, behind SoundTouch); one converter uses one form. libsamplerate moves the
/// ratio linearly from one call's value to the next over the frames a call produces, so the rate
/// moves smoothly; both forms slew the rate itself towards its target, at most a factor of 16 (the
/// whole range) per 100 ms, so 1 → 1.5 takes 15 ms. All memory is allocated in `init`;
/// `src_process` and `src_reset` allocate nothing.
package struct VarispeedResampler: ~Copyable {
    /// Input frames read from the source at a time.
    package static let chunk = 256
    /// The lowest and highest rates libsamplerate's ratio allows here (AVAudioUnitVarispeed's range).
    package static let rates = 0.25...4.0

    private let state: OpaquePointer?
    /// Interleaved input (a chunk) and output (a quantum); the source's two planar channels.
    private let input: RealTimeBuffer<Float>
    private let output: RealTimeBuffer<Float>
    private let left: RealTimeBuffer<Float>
    private let right: RealTimeBuffer<Float>
    private var available = 0
    private var consumed = 0
    /// Input frames given to the converter and not yet out of it (its filter's delay and what it
    /// buffers), counted as frames in minus frames out times the rate.
    private var held = 0.0
    /// The rate the converter runs at now, gliding towards the one asked for.
    package private(set) var rateNow = 1.0
    /// Whether the player reads through the converter (from the first rate other than 1 until a stop).
    package var isActive = false

    /// A converter for quanta of up to `maximumFrameCount` frames (none for 0).
    package init(maximumFrameCount: Int) {
        var error: Int32 = 0
        state = maximumFrameCount > 0 ? src_new(Int32(SRC_SINC_MEDIUM_QUALITY), 2, &error) : nil
        input = RealTimeBuffer(capacity: 2 * Self.chunk, repeating: 0)
        output = RealTimeBuffer(capacity: 2 * max(1, maximumFrameCount), repeating: 0)
        left = RealTimeBuffer(capacity: Self.chunk, repeating: 0)
        right = RealTimeBuffer(capacity: Self.chunk, repeating: 0)
    }

    deinit {
        if let state { src_delete(state) }
    }

    /// The output frames the converter owes, at the rate it runs at now, for the input it has
    /// taken (what it holds to look ahead of the frame it interpolates, and any input beyond).
    package var owed: Int { Int((held / rateNow).rounded()) }

    /// Drops the input read but not yet converted (a clip that interrupts cuts in sooner).
    package mutating func dropBuffered() { consumed = available }

    /// Forgets the converter's history and what it has buffered; inactive again, at rate 1.
    package mutating func reset() {
        if let state { src_reset(state) }
        available = 0
        consumed = 0
        held = 0
        rateNow = 1
        isActive = false
    }

    /// `rate` within `rates`.
    package static func clamped(_ rate: Double) -> Double { min(max(rate, rates.lowerBound), rates.upperBound) }

    /// The rate after a call of `frames` output frames gliding from `rate` towards `target`: at
    /// most a factor of 16 per 100 ms.
    package static func slewed(from rate: Double, to target: Double, frames: Int, sampleRate: Double) -> Double {
        let target = clamped(target)
        guard rate != target else { return target }
        let distance = log(target / rate)
        let most = log(16) * Double(frames) / (0.1 * sampleRate)
        return abs(distance) <= most ? target : rate * exp(distance < 0 ? -most : most)
    }

    /// The mean rate of a `render` of `frames` frames towards `target`: libsamplerate moves the
    /// ratio linearly over a call, from `rateNow` to where the glide takes it (without `glide`,
    /// the rate jumps: `target`, clamped). What a caller that feeds the converter input at the
    /// pace it takes it asks for.
    package func meanRate(towards target: Double, frames: Int, sampleRate: Double, glide: Bool) -> Double {
        guard glide else { return Self.clamped(target) }
        return (rateNow + Self.slewed(from: rateNow, to: target, frames: frames, sampleRate: sampleRate)) / 2
    }

    /// Converts `frames` interleaved stereo frames of `samples` at `rate` (clamped to `rates`;
    /// gliding towards it as `render` does, unless `glide` is false), handing what comes out to
    /// `sink(interleaved, frames)` as it comes: about `frames / rate` frames, less or more by
    /// what the converter's filter holds back. The push form of `render`, for a caller whose
    /// input comes in batches (a time stretcher's segments); one converter uses one form.
    package mutating func convert(
        _ samples: UnsafePointer<Float>, frames: Int, rate: Double, sampleRate: Double, glide: Bool,
        sink: (UnsafePointer<Float>, Int) -> Void
    ) {
        guard let state, frames > 0 else { return }
        var used = 0
        var stalls = 0
        while used < frames && stalls < 4 {
            let step = min(frames - used, Self.chunk)
            rateNow =
                glide
                ? Self.slewed(from: rateNow, to: rate, frames: Int(Double(step) / rateNow), sampleRate: sampleRate)
                : Self.clamped(rate)
            guard let (taken, made) = process(state, samples + 2 * used, step, into: output.base, output.capacity / 2)
            else { return }
            used += taken
            if made > 0 { sink(output.base, made) }
            stalls = taken == 0 && made == 0 ? stalls + 1 : 0
        }
    }

    /// Writes `count` frames into `leftOut`/`rightOut` at `rate` (clamped to `rates`), reading
    /// input through `source(left, right, frames, produced)`, which must write that many frames
    /// (silence where it has none); `produced` is the output frame (from this call's first) at
    /// which what is read will start to sound: the frames written so far plus what the converter
    /// still holds. `sampleRate` sets the glide's pace; without `glide` the rate jumps (nothing
    /// has sounded through the converter yet).
    package mutating func render(
        into leftOut: UnsafeMutablePointer<Float>, _ rightOut: UnsafeMutablePointer<Float>, count: Int, rate: Double,
        sampleRate: Double, glide: Bool,
        source: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, Int, Int) -> Void
    ) {
        guard let state, count > 0, count <= output.capacity / 2 else {
            leftOut.update(repeating: 0, count: count)
            if rightOut != leftOut { rightOut.update(repeating: 0, count: count) }
            return
        }
        rateNow =
            glide ? Self.slewed(from: rateNow, to: rate, frames: count, sampleRate: sampleRate) : Self.clamped(rate)
        var produced = 0
        var stalls = 0
        while produced < count && stalls < 4 {
            if consumed == available {
                source(left.base, right.base, Self.chunk, produced + Int((held / rateNow).rounded()))
                for frame in 0..<Self.chunk {
                    input[2 * frame] = left[frame]
                    input[2 * frame + 1] = right[frame]
                }
                (available, consumed) = (Self.chunk, 0)
            }
            guard
                let (taken, made) = process(
                    state, input.base + 2 * consumed, available - consumed, into: output.base + 2 * produced,
                    count - produced)
            else { break }
            consumed += taken
            produced += made
            stalls = taken == 0 && made == 0 ? stalls + 1 : 0
        }
        for frame in 0..<count {
            leftOut[frame] = frame < produced ? output[2 * frame] : 0
            if rightOut != leftOut { rightOut[frame] = frame < produced ? output[2 * frame + 1] : 0 }
        }
    }

    /// One `src_process` call at `rateNow`: up to `frames` interleaved input frames into room for
    /// `room` output frames, counted into `held`. Returns the frames taken and made; nil on an error.
    private mutating func process(
        _ state: OpaquePointer, _ samples: UnsafePointer<Float>, _ frames: Int,
        into out: UnsafeMutablePointer<Float>, _ room: Int
    ) -> (taken: Int, made: Int)? {
        var data = SRC_DATA()
        data.data_in = samples
        data.input_frames = frames
        data.data_out = out
        data.output_frames = room
        data.src_ratio = 1 / rateNow
        data.end_of_input = 0
        guard src_process(state, &data) == 0 else { return nil }
        held += Double(data.input_frames_used) - Double(data.output_frames_gen) * rateNow
        return (data.input_frames_used, data.output_frames_gen)
    }
}
