import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// The render state of `LimiterNode` and its three passes over each block of frames: detection
/// (the delay line's input and the gain each frame needs), the gain's recursion (a sliding
/// minimum over the look-ahead, smoothed by a moving average, and the release), and the gain
/// applied to the delayed signal. Render-thread code: all memory is allocated in `init`, and
/// freed with the limiter.
///
/// (A class, where the reverb's kernels are noncopyable structs: as a struct's mutating methods,
/// the gain's recursion, a loop bound by latency, compiled to code 8 % slower.)
final class LookAheadLimiter {
    /// Frames of the delay line, of the sliding minimum's queue and of the moving average's ring.
    private let capacity: Int
    private let delay: RealTimeBuffer<Float>  // 2 channels interleaved
    private let minimumIndex: RealTimeBuffer<Int>
    private let minimumValue: RealTimeBuffer<Double>
    private let boxRing: RealTimeBuffer<Double>
    /// Per-frame scratch of one pass to the next (`scratchCapacity` frames).
    private let targets: RealTimeBuffer<Double>
    private let limits: RealTimeBuffer<Float>
    private let gains: RealTimeBuffer<Float>
    private let scratchCapacity: Int
    /// True-peak interpolator input: per channel a ring of `taps` samples stored twice (so the
    /// window is always contiguous), and the interpolator's 4 phases × `taps` coefficients.
    private let history = RealTimeBuffer<Float>(capacity: 4 * TruePeakInterpolator.taps)
    private var historyPosition = 0
    private let phases = TruePeakInterpolator.coefficients()
    private var position = 0
    private var dequeStart = 0
    private var dequeCount = 0
    private var boxSum = 0.0
    /// `position` modulo the look-ahead and modulo the delay's capacity, kept without dividing.
    private var boxSlot = 0
    private var delaySlot = 0
    private var boxCount = 0
    private var gain = 1.0
    /// How many targets in a row, up to the newest, were 1 (nothing to limit); saturates.
    private var unityRun = 0
    private var lookAhead = 0
    private var detectorDelay = 0
    private var truePeak = false
    private var preGainNow = 1.0
    private var ceilingNow = 1.0

    /// A limiter whose delay holds `capacity` frames (the look-ahead, the interpolator's delay and a
    /// block), working in blocks of at most `scratchCapacity` frames.
    init(capacity: Int, scratchCapacity: Int) {
        self.capacity = capacity
        self.scratchCapacity = scratchCapacity
        delay = RealTimeBuffer(capacity: 2 * capacity)
        minimumIndex = RealTimeBuffer(capacity: capacity)
        minimumValue = RealTimeBuffer(capacity: capacity)
        boxRing = RealTimeBuffer(capacity: capacity)
        targets = RealTimeBuffer(capacity: scratchCapacity)
        limits = RealTimeBuffer(capacity: scratchCapacity)
        gains = RealTimeBuffer(capacity: scratchCapacity)
    }

    /// The delay the limiter adds, in frames (look-ahead, plus the interpolator's in true-peak mode).
    var latency: Int { lookAhead + detectorDelay }

    /// Clears the look-ahead and the gain, for a look-ahead of `lookAhead` frames, sample or true
    /// peaks, and a pre-gain and ceiling (dB) taken at once (the render thread on a change of
    /// attack or mode: it only touches preallocated memory).
    func reset(lookAhead: Int, truePeak: Bool, preGainDecibels: Double, ceilingDecibels: Double) {
        self.lookAhead = lookAhead
        detectorDelay = truePeak ? TruePeakInterpolator.taps / 2 : 0
        self.truePeak = truePeak
        delay.clear()
        boxRing.update(repeating: 1)
        history.clear()
        historyPosition = 0
        position = 0
        boxSlot = 0
        delaySlot = 0
        dequeStart = 0
        dequeCount = 0
        boxSum = Double(lookAhead)
        boxCount = 0
        gain = 1
        unityRun = Self.settled
        preGainNow = pow(10, preGainDecibels / 20)
        ceilingNow = pow(10, ceilingDecibels / 20)
    }

    /// Limits `frameCount` frames of `input` into `output`, block by block; returns the deepest
    /// gain. Pre-gain and ceiling glide to the values given, the gain recovers with the release
    /// time constant given.
    func process(
        _ input: AudioBuffer, into output: AudioBuffer, frameCount: Int, preGainDecibels: Double,
        ceilingDecibels: Double, releaseMilliseconds: Double, sampleRate: Double
    ) -> Double {
        var deepest = 1.0
        var done = 0
        while done < frameCount {
            let count = min(scratchCapacity, frameCount - done)
            detect(
                input, from: done, count: count, preGainDecibels: preGainDecibels, ceilingDecibels: ceilingDecibels,
                sampleRate: sampleRate)
            deepest = min(
                deepest, followGain(count: count, releaseMilliseconds: releaseMilliseconds, sampleRate: sampleRate))
            apply(to: output, from: done, count: count)
            done += count
        }
        return deepest
    }

    /// Pass 1: the input after pre-gain into the delay line, and per frame the gain that would
    /// bring the detector's peak to the ceiling (`targets`) and the ceiling itself (`limits`;
    /// pre-gain and ceiling glide over 10 ms when they change).
    private func detect(
        _ input: AudioBuffer, from start: Int, count: Int, preGainDecibels: Double, ceilingDecibels: Double,
        sampleRate: Double
    ) {
        let stereo = input.channelCount > 1
        let left = input.channel(0) + start
        let right = input.channel(stereo ? 1 : 0) + start
        let preTarget = pow(10, preGainDecibels / 20)
        let ceilingTarget = pow(10, ceilingDecibels / 20)
        let smoothing = 1 - exp(-1 / (0.010 * sampleRate))
        // The loops work on locals (no per-sample access checks on the limiter's properties).
        let (targets, limits, delay, capacity) = (self.targets.base, self.limits.base, self.delay.base, self.capacity)
        var preGainNow = self.preGainNow
        var ceilingNow = self.ceilingNow
        var preGain = Float(preGainNow)
        var limit = Float(ceilingNow)
        var slot = delaySlot
        let truePeak = self.truePeak
        let history = self.history.base
        let phases = self.phases.base
        var historyPosition = self.historyPosition
        if !truePeak && preGainNow == preTarget && ceilingNow == ceilingTarget {
            detectSettled(left, right, count: count, preGain: preGain, limit: limit)
            return
        }
        for frame in 0..<count {
            if preGainNow != preTarget || ceilingNow != ceilingTarget {
                preGainNow += (preTarget - preGainNow) * smoothing
                ceilingNow += (ceilingTarget - ceilingNow) * smoothing
                if abs(preGainNow - preTarget) < 1e-7 * preTarget
                    && abs(ceilingNow - ceilingTarget) < 1e-7 * ceilingTarget
                {
                    (preGainNow, ceilingNow) = (preTarget, ceilingTarget)
                }
                (preGain, limit) = (Float(preGainNow), Float(ceilingNow))
            }
            let l = left[frame] * preGain
            let r = right[frame] * preGain
            delay[2 * slot] = l
            delay[2 * slot + 1] = r
            slot += 1
            if slot == capacity { slot = 0 }
            let peak =
                truePeak
                ? Self.truePeak(l, r, history: history, phases: phases, position: &historyPosition)
                : max(abs(l), abs(r))
            targets[frame] = Self.target(peak, limit)
            limits[frame] = limit
        }
        self.preGainNow = preGainNow
        self.ceilingNow = ceilingNow
        self.historyPosition = historyPosition
    }

    /// Pass 1 with sample peaks and pre-gain and ceiling settled: runs up to the delay ring's
    /// end, which vectorize.
    @inline(__always)
    private func detectSettled(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int, preGain: Float,
        limit: Float
    ) {
        // The loops work on locals (no per-sample access checks on the limiter's properties).
        let (targets, limits, delay, capacity) = (self.targets.base, self.limits.base, self.delay.base, self.capacity)
        var slot = delaySlot
        limits.update(repeating: limit, count: count)
        var frame = 0
        while frame < count {
            let run = min(count - frame, capacity - slot)
            let ring = delay + 2 * slot
            let (runLeft, runRight, runTargets) = (left + frame, right + frame, targets + frame)
            for index in 0..<run {
                let l = runLeft[index] * preGain
                let r = runRight[index] * preGain
                ring[2 * index] = l
                ring[2 * index + 1] = r
                let peak = max(abs(l), abs(r))
                runTargets[index] = Self.target(peak, limit)
            }
            frame += run
            slot += run
            if slot == capacity { slot = 0 }
        }
    }

    /// The true peak (4× oversampled) around the newest frame, `l` and `r`, which it first takes
    /// into the interpolator's `history` at `position` (moved on). Channel c's ring is
    /// history[2·taps·c ..< 2·taps·(c+1)], each sample written twice so that the last `taps`
    /// samples are contiguous.
    @inline(__always)
    private static func truePeak(
        _ l: Float, _ r: Float, history: UnsafeMutablePointer<Float>, phases: UnsafeMutablePointer<Float>,
        position: inout Int
    ) -> Float {
        let taps = TruePeakInterpolator.taps
        history[position] = l
        history[position + taps] = l
        history[2 * taps + position] = r
        history[2 * taps + position + taps] = r
        position += 1
        if position == taps { position = 0 }
        let leftWindow = UnsafeRawPointer(history + position)
        let rightWindow = UnsafeRawPointer(history + 2 * taps + position)
        // Phase 0 is the sample 16 back itself (its taps are a unit impulse).
        var peak = max(
            abs(leftWindow.load(fromByteOffset: 4 * (taps / 2 - 1), as: Float.self)),
            abs(rightWindow.load(fromByteOffset: 4 * (taps / 2 - 1), as: Float.self)))
        for phase in 1..<4 {
            let coefficients = phases + taps * phase
            #if DEBUG
                let (a, b) = (
                    Self.scalarDot(coefficients, leftWindow, taps),
                    Self.scalarDot(coefficients, rightWindow, taps)
                )
            #else
                let (a, b) = (
                    Self.vectorDot(coefficients, leftWindow, taps),
                    Self.vectorDot(coefficients, rightWindow, taps)
                )
            #endif
            peak = max(peak, abs(a), abs(b))
        }
        return peak
    }

    /// The inner product of `count` (a multiple of 4) coefficients and samples, in four lanes
    /// summed in order at the end: one `SIMD4` accumulator, for optimized builds.
    @inline(__always)
    static func vectorDot(_ coefficients: UnsafePointer<Float>, _ samples: UnsafeRawPointer, _ count: Int) -> Float {
        let coefficients = UnsafeRawPointer(coefficients)
        var sum = SIMD4<Float>.zero
        for chunk in stride(from: 0, to: 4 * count, by: 16) {
            sum +=
                coefficients.loadUnaligned(fromByteOffset: chunk, as: SIMD4<Float>.self)
                * samples.loadUnaligned(fromByteOffset: chunk, as: SIMD4<Float>.self)
        }
        return sum.sum()
    }

    /// `vectorDot` in scalars, bit for bit (each lane's products added in the same order, the lanes
    /// summed as `SIMD4.sum()` does): an unoptimized build (the tests') runs it about 25 times
    /// faster than generic `SIMD4` arithmetic, which the optimizer does not make of it.
    @inline(__always)
    static func scalarDot(_ coefficients: UnsafePointer<Float>, _ samples: UnsafeRawPointer, _ count: Int) -> Float {
        let samples = samples.assumingMemoryBound(to: Float.self)
        var (a0, a1, a2, a3): (Float, Float, Float, Float) = (0, 0, 0, 0)
        var index = 0
        while index < count {
            a0 += coefficients[index] * samples[index]
            a1 += coefficients[index &+ 1] * samples[index &+ 1]
            a2 += coefficients[index &+ 2] * samples[index &+ 2]
            a3 += coefficients[index &+ 3] * samples[index &+ 3]
            index &+= 4
        }
        return ((a0 + a1) + a2) + a3
    }

    /// The gain that brings `peak` down to `limit` (1 if it is not above).
    @inline(__always)
    private static func target(_ peak: Float, _ limit: Float) -> Double {
        peak > limit ? Double(limit) / Double(peak) : 1
    }

    /// Pass 2, the one recursion: per frame, the minimum of `targets` over the look-ahead (a
    /// monotonic queue), its moving average over the same length, and the gain that follows it
    /// down at once and up with the release time constant, into `gains`. Returns the deepest gain.
    private func followGain(count: Int, releaseMilliseconds: Double, sampleRate: Double) -> Double {
        // (The queue's window is lookAhead + 1 frames; the moving average's, lookAhead.)
        if unityRun >= (lookAhead + 1) + lookAhead && Float(gain) == 1 {
            var lowest = 1.0
            for frame in 0..<count { lowest = min(lowest, targets[frame]) }
            if lowest == 1 {
                restAtUnity(count: count)
                return 1
            }
        }
        let releaseCoefficient = 1 - exp(-1 / (releaseMilliseconds / 1_000 * sampleRate))
        let hold = 1 - releaseCoefficient
        let window = lookAhead + 1
        let inverseLookAhead = 1 / Double(lookAhead)
        let (targets, gains, capacity, lookAhead) = (self.targets.base, self.gains.base, self.capacity, self.lookAhead)
        let (minimumIndex, minimumValue, boxRing) = (self.minimumIndex.base, self.minimumValue.base, self.boxRing.base)
        var dequeStart = self.dequeStart
        var dequeCount = self.dequeCount
        var boxSum = self.boxSum
        var boxCount = self.boxCount
        var boxSlot = self.boxSlot
        var gain = self.gain
        var position = self.position
        var unityRun = self.unityRun
        var deepest = 1.0
        // The queue's newest value, kept in a register (it was stored a moment ago).
        var back = 0.0
        if dequeCount > 0 {
            var last = dequeStart + dequeCount - 1
            if last >= capacity { last -= capacity }
            back = minimumValue[last]
        }
        for frame in 0..<count {
            let target = targets[frame]
            unityRun = target == 1 ? min(unityRun + 1, Self.settled) : 0
            while dequeCount > 0 && back >= target {
                dequeCount -= 1
                if dequeCount > 0 {
                    var last = dequeStart + dequeCount - 1
                    if last >= capacity { last -= capacity }
                    back = minimumValue[last]
                }
            }
            var tail = dequeStart + dequeCount
            if tail >= capacity { tail -= capacity }
            minimumIndex[tail] = position
            minimumValue[tail] = target
            back = target
            dequeCount += 1
            while minimumIndex[dequeStart] <= position - window {
                dequeStart += 1
                if dequeStart == capacity { dequeStart = 0 }
                dequeCount -= 1
            }
            let minimum = minimumValue[dequeStart]
            boxSum += minimum - boxRing[boxSlot]
            boxRing[boxSlot] = minimum
            boxSlot += 1
            if boxSlot == lookAhead { boxSlot = 0 }
            boxCount += 1
            if boxCount >= 4_096 {  // refresh the running sum against rounding drift
                boxCount = 0
                boxSum = 0
                for index in 0..<lookAhead { boxSum += boxRing[index] }
            }
            let smoothed = min(boxSum * inverseLookAhead, 1)
            // Down at once, up with the release time constant: min(smoothed, the release step)
            // is the same choice, and keeps the recursion one multiply and one add long.
            gain = min(smoothed, hold * gain + releaseCoefficient * smoothed)
            deepest = min(deepest, gain)
            gains[frame] = Float(gain)
            position += 1
        }
        self.dequeStart = dequeStart
        self.dequeCount = dequeCount
        self.boxSum = boxSum
        self.boxCount = boxCount
        self.boxSlot = boxSlot
        self.gain = gain
        self.position = position
        self.unityRun = unityRun
        return deepest
    }

    /// A run of unity targets long enough to have filled the queue's window and the moving
    /// average with ones.
    private static let settled = 1 << 40

    /// Pass 2 while there is nothing to limit: the last `window + lookAhead` targets were 1 (so the
    /// queue holds only ones, and so does the moving average), the gain is back at 1 (as the Float
    /// it is applied as), and the block's targets are all 1. The state is set to what the frame
    /// by frame recursion would leave (the running sum exact, as a refresh would make it).
    private func restAtUnity(count: Int) {
        gains.base.update(repeating: 1, count: count)
        position += count
        dequeStart = 0
        dequeCount = 1
        minimumIndex[0] = position - 1
        minimumValue[0] = 1
        boxSum = Double(lookAhead)
        boxCount = 0
        boxSlot = (boxSlot + count) % lookAhead
        gain = 1
        unityRun = min(unityRun + count, Self.settled)
    }

    /// `v` clamped to ±`limit` (by comparisons and selects: the standard library's clamping keeps
    /// IEEE minimum's NaN rules and does not vectorize).
    @inline(__always)
    private static func clamp(_ v: SIMD4<Float>, _ limit: SIMD4<Float>) -> SIMD4<Float> {
        var v = v
        v.replace(with: limit, where: v .> limit)
        v.replace(with: -limit, where: v .< -limit)
        return v
    }

    /// Pass 3: the delayed signal times the gain, clamped at the ceiling.
    private func apply(to output: AudioBuffer, from start: Int, count: Int) {
        let (gains, limits, delay, capacity) = (self.gains.base, self.limits.base, self.delay.base, self.capacity)
        let outLeft = output.channel(0) + start
        let outRight = output.channelCount > 1 ? output.channel(1) + start : nil
        // Frame i was written `lookAhead + detectorDelay` slots before the delay's write position.
        var read = delaySlot - (lookAhead + detectorDelay)
        if read < 0 { read += capacity }
        var frame = 0
        while frame < count {
            let run = min(count - frame, capacity - read)  // up to the ring's end
            let source = delay + 2 * read
            var index = 0
            if let outRight {
                // Four frames at a time: the interleaved pairs split into left and right.
                while index + 4 <= run {
                    let pairs = UnsafeRawPointer(source + 2 * index).loadUnaligned(as: SIMD8<Float>.self)
                    let scale = UnsafeRawPointer(gains + frame + index).loadUnaligned(as: SIMD4<Float>.self)
                    let limit = UnsafeRawPointer(limits + frame + index).loadUnaligned(as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(outLeft + frame + index).storeBytes(
                        of: Self.clamp(pairs.evenHalf * scale, limit), as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(outRight + frame + index).storeBytes(
                        of: Self.clamp(pairs.oddHalf * scale, limit), as: SIMD4<Float>.self)
                    index += 4
                }
            }
            let done = index
            for index in done..<run {
                let scale = gains[frame + index]
                let limit = limits[frame + index]
                outLeft[frame + index] = min(max(source[2 * index] * scale, -limit), limit)
            }
            if let outRight {
                for index in done..<run {
                    let scale = gains[frame + index]
                    let limit = limits[frame + index]
                    outRight[frame + index] = min(max(source[2 * index + 1] * scale, -limit), limit)
                }
            }
            frame += run
            read += run
            if read == capacity { read = 0 }
        }
        delaySlot += count
        if delaySlot >= capacity { delaySlot -= capacity }
    }
}
