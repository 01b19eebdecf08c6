import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A look-ahead peak limiter, the counterpart of AUPeakLimiter, with a ceiling and a true-peak
/// mode. The output never exceeds the ceiling.
///
/// The signal (after `preGain`) is delayed by the attack time; a detector looks at it ahead of
/// the delay: each sample's (or, in true-peak mode, each 4× interpolated point's) absolute value
/// gives the gain that would bring it to the ceiling. A sliding minimum of that gain over the
/// look-ahead, smoothed by a moving average of the same length, reaches the needed gain exactly
/// when the peak leaves the delay, ramping down over the attack time; the gain then recovers with
/// the release time constant. A final clamp at the ceiling catches rounding. True-peak detection
/// oversamples 4× as ITU-R BS.1770 describes, with a 128-tap interpolator (32 taps per phase,
/// windowed sinc), and adds its 16 samples of delay. `latency` reports the delay.
///
/// Stereo channels are linked (one gain). Changing the attack or true-peak mode restarts the
/// look-ahead; the other parameters change smoothly.
public final class LimiterNode: AudioNode, @unchecked Sendable {
    /// Look-ahead and attack, ms, 1 … 30.
    public var attack: Double {
        get { load(attackBits) }
        set { store(attackBits, min(max(newValue, 1), 30)) }
    }
    /// Release time constant, ms, 1 … 1000.
    public var release: Double {
        get { load(releaseBits) }
        set { store(releaseBits, min(max(newValue, 1), 1_000)) }
    }
    /// Gain before limiting, dB, −40 … +40.
    public var preGain: Double {
        get { load(preGainBits) }
        set { store(preGainBits, min(max(newValue, -40), 40)) }
    }
    /// The ceiling, dBFS (dBTP in true-peak mode), −40 … 0.
    public var ceiling: Double {
        get { load(ceilingBits) }
        set { store(ceilingBits, min(max(newValue, -40), 0)) }
    }
    /// Detect peaks between samples (4× oversampled).
    public var truePeak: Bool {
        get { truePeakFlag.load(ordering: .relaxed) }
        set { truePeakFlag.store(newValue, ordering: .relaxed) }
    }
    /// The delay the limiter adds, in frames (look-ahead, plus the interpolator's in true-peak mode).
    public var latency: Int { latencyFrames.load(ordering: .relaxed) }
    /// The deepest gain reduction of the last quantum, in dB (0 or negative).
    public var gainReduction: Double { Double(Float(bitPattern: reductionBits.load(ordering: .relaxed))) }

    public static let parameters: [EffectParameter] = [
        EffectParameter("attack", "attack (look-ahead)", range: 1...30, default: 5, unit: .milliseconds),
        EffectParameter("release", "release", range: 1...1_000, default: 100, unit: .milliseconds),
        EffectParameter("preGain", "gain before limiting", range: -40...40, default: 0, unit: .decibels),
        EffectParameter("ceiling", "ceiling", range: -40...0, default: -1, unit: .decibels),
        EffectParameter("truePeak", "true-peak detection (4× oversampled)", range: 0...1, default: 0, unit: .boolean),
    ]

    private let attackBits = Atomic<UInt64>(5.0.bitPattern)
    private let releaseBits = Atomic<UInt64>(100.0.bitPattern)
    private let preGainBits = Atomic<UInt64>(0.0.bitPattern)
    private let ceilingBits = Atomic<UInt64>((-1.0).bitPattern)
    private let truePeakFlag = Atomic<Bool>(false)
    private let latencyFrames = Atomic<Int>(0)
    private let reductionBits = Atomic<UInt32>(Float(0).bitPattern)

    private func load(_ atomic: borrowing Atomic<UInt64>) -> Double {
        Double(bitPattern: atomic.load(ordering: .relaxed))
    }
    private func store(_ atomic: borrowing Atomic<UInt64>, _ value: Double) {
        atomic.store(value.bitPattern, ordering: .relaxed)
    }

    // Render state, sized in prepare for the longest look-ahead.
    private var sampleRate = 44_100.0
    private var capacity = 0
    private var delay: UnsafeMutablePointer<Float> = .allocate(capacity: 1)  // 2 channels interleaved
    private var minimumIndex: UnsafeMutablePointer<Int> = .allocate(capacity: 1)
    private var minimumValue: UnsafeMutablePointer<Double> = .allocate(capacity: 1)
    private var boxRing: UnsafeMutablePointer<Double> = .allocate(capacity: 1)
    /// Per-frame scratch of one pass to the next (`scratchCapacity` frames).
    private var targets: UnsafeMutablePointer<Double> = .allocate(capacity: 1)
    private var limits: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var gains: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var scratchCapacity = 1
    /// True-peak interpolator input: per channel a ring of `taps` samples stored twice (so the
    /// window is always contiguous), and the interpolator's 4 phases × `taps` coefficients.
    static let taps = 32
    private let history = UnsafeMutablePointer<Float>.allocate(capacity: 4 * LimiterNode.taps)
    private var historyPosition = 0
    private let phases: UnsafeMutablePointer<Float> = {
        let coefficients = UnsafeMutablePointer<Float>.allocate(capacity: 4 * LimiterNode.taps)
        for (phase, values) in LimiterNode.interpolator().enumerated() {
            // Points between samples read 0.1 dB high: the limiter aims that much under the
            // ceiling there, the accuracy of the interpolator near Nyquist and of BS.1770 meters.
            let margin: Float = phase == 0 ? 1 : 1.011_579  // +0.1 dB
            for (tap, value) in values.enumerated() { coefficients[phase * LimiterNode.taps + tap] = value * margin }
        }
        return coefficients
    }()
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
    private var configuredAttack = -1.0
    private var configuredTruePeak = false
    private var preGainNow = 1.0
    private var ceilingNow = 1.0

    public init() {
        history.initialize(repeating: 0, count: 4 * LimiterNode.taps)
        super.init(name: "limiter")
    }

    deinit {
        history.deallocate()
        phases.deallocate()
        delay.deallocate()
        minimumIndex.deallocate()
        minimumValue.deallocate()
        boxRing.deallocate()
        targets.deallocate()
        limits.deallocate()
        gains.deallocate()
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        scratchCapacity = max(1, min(maximumFrameCount, 4_096))
        // The delay holds the longest look-ahead behind a whole pass's writes.
        capacity = Int((0.030 * sampleRate).rounded(.up)) + Self.taps / 2 + scratchCapacity
        delay.deallocate()
        minimumIndex.deallocate()
        minimumValue.deallocate()
        boxRing.deallocate()
        targets.deallocate()
        limits.deallocate()
        gains.deallocate()
        delay = .allocate(capacity: 2 * capacity)
        minimumIndex = .allocate(capacity: capacity)
        minimumValue = .allocate(capacity: capacity)
        boxRing = .allocate(capacity: capacity)
        targets = .allocate(capacity: scratchCapacity)
        limits = .allocate(capacity: scratchCapacity)
        gains = .allocate(capacity: scratchCapacity)
        reset()
    }

    /// Clears the look-ahead and the gain (control thread, or the render thread on a change of
    /// attack or mode: it only touches preallocated memory).
    public override func reset() {
        lookAhead = max(1, Int((attack / 1_000 * sampleRate).rounded()))
        detectorDelay = truePeak ? Self.taps / 2 : 0
        configuredAttack = attack
        configuredTruePeak = truePeak
        delay.initialize(repeating: 0, count: 2 * capacity)
        boxRing.initialize(repeating: 1, count: capacity)
        history.update(repeating: 0, count: 4 * Self.taps)
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
        preGainNow = pow(10, preGain / 20)
        ceilingNow = pow(10, ceiling / 20)
        latencyFrames.store(lookAhead + detectorDelay, ordering: .relaxed)
    }

    /// The 4 phases × 32 taps of the interpolator: a Hann-windowed sinc, each phase normalized to
    /// unit gain at DC (within 0.11 dB of the ideal up to 0.45 × the sample rate). Phase p gives
    /// the signal p/4 of a sample after the point 16 samples before the newest input (phase 0 is
    /// that sample itself).
    static func interpolator() -> [[Float]] {
        let half = Double(taps / 2)
        return (0..<4).map { phase in
            let offset = Double(phase) / 4
            var taps = (0..<Self.taps).map { tap -> Double in
                // Tap k holds x[n − 31 + k]; the point interpolated is at n − 16 + offset.
                let u = Double(tap) - Double(Self.taps - 1) + half - offset
                let sinc = u == 0 ? 1 : sin(Double.pi * u) / (Double.pi * u)
                let window = abs(u) < half + 0.5 ? 0.5 * (1 + cos(Double.pi * u / (half + 0.5))) : 0
                return sinc * window
            }
            let sum = taps.reduce(0, +)
            taps = taps.map { $0 / sum }
            return taps.map(Float.init)
        }
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        if attack != configuredAttack || truePeak != configuredTruePeak { reset() }
        var deepest = 1.0
        var done = 0
        while done < frameCount {
            let count = min(scratchCapacity, frameCount - done)
            detect(input, from: done, count: count)
            deepest = min(deepest, followGain(count: count))
            apply(to: output, from: done, count: count)
            done += count
        }
        reductionBits.store(Float(20 * log10(max(deepest, 1e-9))).bitPattern, ordering: .relaxed)
    }

    /// Pass 1: the input after pre-gain into the delay line, and per frame the gain that would
    /// bring the detector's peak to the ceiling (`targets`) and the ceiling itself (`limits`;
    /// pre-gain and ceiling glide over 10 ms when they change).
    private func detect(_ input: AudioBuffer, from start: Int, count: Int) {
        let stereo = input.channelCount > 1
        let left = input.channel(0) + start
        let right = input.channel(stereo ? 1 : 0) + start
        let preTarget = pow(10, preGain / 20)
        let ceilingTarget = pow(10, ceiling / 20)
        let smoothing = 1 - exp(-1 / (0.010 * sampleRate))
        // The loops work on locals (no per-sample access checks on the node's properties).
        let (targets, limits, delay, capacity) = (self.targets, self.limits, self.delay, self.capacity)
        var preGainNow = self.preGainNow
        var ceilingNow = self.ceilingNow
        var preGain = Float(preGainNow)
        var limit = Float(ceilingNow)
        var slot = delaySlot
        let truePeak = configuredTruePeak
        let history = self.history
        let phases = self.phases
        let taps = Self.taps
        var historyPosition = self.historyPosition
        if !truePeak && preGainNow == preTarget && ceilingNow == ceilingTarget {
            // Sample peaks, pre-gain and ceiling settled: runs up to the ring's end, which
            // vectorize.
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
            var peak: Float
            if truePeak {
                // Channel c's ring is history[2·taps·c ..< 2·taps·(c+1)], each sample written
                // twice so that the last `taps` samples are contiguous.
                history[historyPosition] = l
                history[historyPosition + taps] = l
                history[2 * taps + historyPosition] = r
                history[2 * taps + historyPosition + taps] = r
                historyPosition += 1
                if historyPosition == taps { historyPosition = 0 }
                let leftWindow = UnsafeRawPointer(history + historyPosition)
                let rightWindow = UnsafeRawPointer(history + 2 * taps + historyPosition)
                // Phase 0 is the sample 16 back itself (its taps are a unit impulse).
                peak = max(
                    abs(leftWindow.load(fromByteOffset: 4 * (taps / 2 - 1), as: Float.self)),
                    abs(rightWindow.load(fromByteOffset: 4 * (taps / 2 - 1), as: Float.self)))
                for phase in 1..<4 {
                    let coefficients = UnsafeRawPointer(phases + taps * phase)
                    var a = SIMD4<Float>.zero
                    var b = SIMD4<Float>.zero
                    for chunk in stride(from: 0, to: 4 * taps, by: 16) {
                        let t = coefficients.loadUnaligned(fromByteOffset: chunk, as: SIMD4<Float>.self)
                        a += t * leftWindow.loadUnaligned(fromByteOffset: chunk, as: SIMD4<Float>.self)
                        b += t * rightWindow.loadUnaligned(fromByteOffset: chunk, as: SIMD4<Float>.self)
                    }
                    peak = max(peak, abs(a.sum()), abs(b.sum()))
                }
            } else {
                peak = max(abs(l), abs(r))
            }
            targets[frame] = Self.target(peak, limit)
            limits[frame] = limit
        }
        self.preGainNow = preGainNow
        self.ceilingNow = ceilingNow
        self.historyPosition = historyPosition
    }

    /// The gain that brings `peak` down to `limit` (1 if it is not above).
    @inline(__always)
    private static func target(_ peak: Float, _ limit: Float) -> Double {
        peak > limit ? Double(limit) / Double(peak) : 1
    }

    /// Pass 2, the one recursion: per frame, the minimum of `targets` over the look-ahead (a
    /// monotonic queue), its moving average over the same length, and the gain that follows it
    /// down at once and up with the release time constant, into `gains`. Returns the deepest gain.
    private func followGain(count: Int) -> Double {
        // (The queue's window is lookAhead + 1 frames; the moving average's, lookAhead.)
        if unityRun >= (lookAhead + 1) + lookAhead && Float(gain) == 1 {
            var lowest = 1.0
            for frame in 0..<count { lowest = min(lowest, targets[frame]) }
            if lowest == 1 {
                restAtUnity(count: count)
                return 1
            }
        }
        let releaseCoefficient = 1 - exp(-1 / (release / 1_000 * sampleRate))
        let hold = 1 - releaseCoefficient
        let window = lookAhead + 1
        let inverseLookAhead = 1 / Double(lookAhead)
        let (targets, gains, capacity, lookAhead) = (self.targets, self.gains, self.capacity, self.lookAhead)
        let (minimumIndex, minimumValue, boxRing) = (self.minimumIndex, self.minimumValue, self.boxRing)
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
        gains.update(repeating: 1, count: count)
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
        let (gains, limits, delay, capacity) = (self.gains, self.limits, self.delay, self.capacity)
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
