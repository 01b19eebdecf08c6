import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// The dynamics processor's render state and its four passes over a block (Giannoulis, Massberg
/// and Reiss, "Digital Dynamic Range Compressor Design — A Tutorial and Analysis", JAES 2012):
///
/// 1. the detector: the side-chain's level per frame, the largest of the channels when they are
///    linked, as a power (peak: the squared sample; RMS: its one-pole mean over 10 ms);
/// 2. its level in dB (8 frames at a time);
/// 3. the static curve and the smoothing: the gain the curve gives that level (compression above
///    the threshold with a soft knee, expansion below the expansion threshold), followed in dB by a
///    branching one-pole, the attack's time constant while the compression's gain falls, the
///    release's while it rises, so both are exact time constants (the expansion's gain the other
///    way round: it attacks as it opens);
/// 4. the gain, plus make-up, as a factor (8 frames at a time), applied to the audio, which a
///    look-ahead delays behind the detector.
///
/// Render-thread code: all memory is allocated in `init`.
struct CompressorKernel: ~Copyable {
    /// The settings of one block, in the units the passes use.
    struct Settings {
        var threshold: Float
        var ratio: Float
        var knee: Float
        var expansionThreshold: Float
        var expansionRatio: Float
        var makeUp: Float
        var attack: Float
        var release: Float
        var rms: Bool
        var linked: Bool
    }

    /// The deepest gain the curve gives, dB: a gate's floor that a release climbs out of in time.
    static let floor: Float = -120

    let channelCount: Int
    let blockCapacity: Int
    /// Per detector (one when linked, else one per channel): levels, then gains, for a block.
    private let levels: RealTimeBuffer<Float>
    private let gains: RealTimeBuffer<Float>
    /// Per detector: the RMS detector's mean square, and the smoothed gain in dB.
    private let meanSquares: RealTimeBuffer<Float>
    private let smoothed: RealTimeBuffer<Float>
    /// Per detector: the expander's smoothed gain in dB.
    private let expanded: RealTimeBuffer<Float>
    /// The look-ahead: a ring per channel.
    private let ring: RealTimeBuffer<Float>
    private let ringSize: Int
    private var write = 0
    /// Look-ahead in frames.
    private(set) var lookAhead = 0

    init(channelCount: Int, blockCapacity: Int, maximumLookAhead: Int) {
        self.channelCount = channelCount
        self.blockCapacity = blockCapacity
        let padded = (blockCapacity + 7) / 8 * 8
        levels = RealTimeBuffer(capacity: max(1, channelCount) * padded, alignment: 32)
        gains = RealTimeBuffer(capacity: max(1, channelCount) * padded, alignment: 32)
        meanSquares = RealTimeBuffer(capacity: max(1, channelCount))
        smoothed = RealTimeBuffer(capacity: max(1, channelCount))
        expanded = RealTimeBuffer(capacity: max(1, channelCount))
        ringSize = 1 << (Int.bitWidth - (maximumLookAhead + blockCapacity).leadingZeroBitCount)
        ring = RealTimeBuffer(capacity: max(1, channelCount) * ringSize)
    }

    private var padded: Int { (blockCapacity + 7) / 8 * 8 }

    /// Silence: no gain reduction, an empty look-ahead of `frames`.
    mutating func reset(lookAhead frames: Int) {
        lookAhead = min(frames, ringSize - blockCapacity)
        ring.clear()
        meanSquares.clear()
        smoothed.clear()
        expanded.clear()
        write = 0
    }

    /// Processes `count` (≤ `blockCapacity`) frames of `input` into `output`, detecting on
    /// `detector` (the side-chain, or the input). Returns the deepest smoothed gain of the block, dB.
    mutating func process(
        _ input: AudioBuffer, detector: AudioBuffer, into output: AudioBuffer, from offset: Int, count: Int,
        sampleRate: Float, settings: Settings
    ) -> Float {
        let detectors = settings.linked ? 1 : channelCount
        detect(detector, from: offset, count: count, detectors: detectors, sampleRate: sampleRate, settings: settings)
        var deepest: Float = 0
        for index in 0..<detectors {
            deepest = min(deepest, curve(index, count: count, sampleRate: sampleRate, settings: settings))
        }
        apply(input, into: output, from: offset, count: count, detectors: detectors)
        return deepest
    }

    /// Passes 1 and 2: each detector's level in dB per frame into `levels`.
    private func detect(
        _ detector: AudioBuffer, from offset: Int, count: Int, detectors: Int, sampleRate: Float, settings: Settings
    ) {
        let sources = detector.channelCount
        let average = 1 - exp(-1 / (0.010 * sampleRate))
        for index in 0..<detectors {
            let power = levels.base + index * padded
            let first = settings.linked ? 0 : min(index, sources - 1)
            let last = settings.linked ? min(channelCount, sources) - 1 : first
            let start = detector.channel(first) + offset
            for frame in 0..<count { power[frame] = start[frame] * start[frame] }
            if last > first {
                for channel in first + 1...last {
                    let samples = detector.channel(channel) + offset
                    for frame in 0..<count { power[frame] = max(power[frame], samples[frame] * samples[frame]) }
                }
            }
            if settings.rms {
                var mean = meanSquares[index]
                for frame in 0..<count {
                    mean += average * (power[frame] - mean)
                    power[frame] = mean
                }
                meanSquares[index] = mean < 1e-30 ? 0 : mean
            }
            for frame in count..<((count + 7) / 8 * 8) { power[frame] = 1 }
            // 10 log10(power), with a floor at −300 dB (no zero into the logarithm).
            let raw = UnsafeMutableRawPointer(power)
            for block in 0..<(count + 7) / 8 {
                var lanes = raw.load(fromByteOffset: block * 32, as: SIMD8<Float>.self)
                lanes.replace(with: 1e-30, where: lanes .< 1e-30)
                raw.storeBytes(of: FastLog.log2(lanes) * 3.010_299_96, toByteOffset: block * 32, as: SIMD8<Float>.self)
            }
        }
    }

    /// Pass 3 for detector `index`: the curve's gain per frame, smoothed, into `gains`. Returns the
    /// deepest gain.
    private func curve(_ index: Int, count: Int, sampleRate: Float, settings: Settings) -> Float {
        let level = levels.base + index * padded
        let gain = gains.base + index * padded
        let attack = exp(-1 / (max(settings.attack, 1e-6) * sampleRate))
        let release = exp(-1 / (max(settings.release, 1e-6) * sampleRate))
        let slope = 1 / settings.ratio - 1
        let expansionSlope = settings.expansionRatio - 1
        let (threshold, knee) = (settings.threshold, settings.knee)
        var state = smoothed[index]
        var expansion = expanded[index]
        var deepest: Float = 0
        // The static curve first, into `gain`, without branches (the level crosses the threshold
        // and the knee unpredictably): below the knee 0, in it a quadratic, above it the slope.
        let halfKnee = knee / 2
        let inverseKnee = knee > 0 ? 1 / (2 * knee) : 0
        for frame in 0..<count {
            let over = level[frame] - threshold
            let into = over + halfKnee
            var bent = over >= halfKnee ? over : into * into * inverseKnee
            bent = over > -halfKnee ? bent : 0
            gain[frame] = slope * bent
        }
        if expansionSlope == 0 && expansion == 0 {
            // No expansion: only the compressor's recursion. Both of its steps are taken and one
            // kept: the choice, which depends on the state, then runs beside the arithmetic
            // instead of before it (the chain from one frame's state to the next is a multiply,
            // an add and a select: a quarter shorter).
            let (attackRest, releaseRest) = (1 - attack, 1 - release)
            for frame in 0..<count {
                let target = gain[frame]
                // Compression attacks as its gain falls and releases as it rises.
                let (attacked, released) = (
                    attackRest * target + attack * state, releaseRest * target + release * state
                )
                state = target < state ? attacked : released
                let total = max(state, Self.floor)
                gain[frame] = total
                deepest = min(deepest, total)
            }
        } else {
            for frame in 0..<count {
                let target = gain[frame]
                state = target + (target < state ? attack : release) * (state - target)
                // Expansion the other way round, as a gate opens (attack) and closes (release): a
                // peak detector's dips between the peaks of a wave do not close it.
                let expansionTarget = max(
                    expansionSlope * min(level[frame] - settings.expansionThreshold, 0), Self.floor)
                expansion =
                    expansionTarget + (expansionTarget > expansion ? attack : release) * (expansion - expansionTarget)
                let total = max(state + expansion, Self.floor)
                gain[frame] = total
                deepest = min(deepest, total)
            }
        }
        smoothed[index] = state
        expanded[index] = expansion
        for frame in count..<((count + 7) / 8 * 8) { gain[frame] = 0 }
        // As factors, with the make-up gain: 2^((gain + make-up) / 20 · log2 10).
        let raw = UnsafeMutableRawPointer(gain)
        for block in 0..<(count + 7) / 8 {
            let lanes = raw.load(fromByteOffset: block * 32, as: SIMD8<Float>.self)
            raw.storeBytes(
                of: FastLog.exp2((lanes + settings.makeUp) * 0.166_096_4), toByteOffset: block * 32,
                as: SIMD8<Float>.self)
        }
        return deepest
    }

    /// Pass 4: the audio, delayed by the look-ahead, times the gains.
    private mutating func apply(
        _ input: AudioBuffer, into output: AudioBuffer, from offset: Int, count: Int, detectors: Int
    ) {
        let mask = ringSize - 1
        for channel in 0..<min(channelCount, output.channelCount) {
            let source = input.channel(min(channel, input.channelCount - 1)) + offset
            let target = output.channel(channel) + offset
            let gain = gains.base + (detectors == 1 ? 0 : channel) * padded
            if lookAhead == 0 {
                for frame in 0..<count { target[frame] = source[frame] * gain[frame] }
                continue
            }
            let line = ring.base + channel * ringSize
            for frame in 0..<count {
                let position = write &+ frame
                line[position & mask] = source[frame]
                target[frame] = line[(position &- lookAhead) & mask] * gain[frame]
            }
        }
        write &+= count
    }
}
