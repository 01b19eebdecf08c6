import AudioGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The reverb a SoundFont synthesizer's reverb send feeds, set up as FluidSynth 2.3's: a mono
/// input, a stereo output meant to be added to the dry signal, and FluidSynth's defaults (room size
/// 0.2, damping 0, width 0.5, level 0.9) for its level and decay (T60 about 0.98 s at room 0.2 and
/// 44.1 kHz).
///
/// It is an eight-line feedback delay network (Jot's design), built from FluidSynth's published
/// structure, not its code: the input, scaled by 0.1, passes a first-order tone corrector and enters
/// every line; the lines are read through first-order all-pass interpolation, their lengths
/// modulated by up to 8 samples at 1 Hz (the phases 45° apart); a one-pole low-pass per line sets its loop gain for the decay time at DC and
/// at the Nyquist frequency; the lines feed back through a rotation minus a quarter of their sum
/// (an orthogonal matrix). Two sign patterns over the lines give a left and a right output, which
/// `width` crosses into each other and `level` scales.
///
/// The lines' lengths are FluidSynth's as measured at 44.1 kHz: its published lengths (601 to 1129
/// samples, doubled) as its reverb sizes them for 96 kHz, 2617 to 4915 samples. Measured against
/// libfluidsynth 2.3 through the same send, the wet signal's waveform correlates at 0.995 and its
/// level is within 0.1 dB. At other rates the lines keep those lengths in samples up to 96 kHz and
/// grow with the rate above it (not measured).
///
/// Usable outside a graph: make it for a sample rate, then call ``process(_:left:right:count:)``
/// from one thread at a time. Processing allocates nothing and takes no lock.
///
/// ```swift
/// let reverb = SynthReverb(sampleRate: 44_100)
/// reverb.process(send, left: left, right: right, count: 512)  // adds the wet signal
/// ```
public final class SynthReverb {
    /// What a ``SynthReverb`` is set up with: FluidSynth's reverb settings and their defaults.
    public struct Settings: Sendable, Hashable {
        /// The room size, 0 … 1 (FluidSynth's `synth.reverb.room-size`): the decay time at DC,
        /// through the longest line's loop gain, from the gain that gives 0.7 s (at 0) to the one
        /// that gives 12.5 s (at 1); at 44.1 kHz, 0.98 s at the default, 0.2.
        public var roomSize: Double
        /// High-frequency damping, 0 … 1 (`synth.reverb.damp`): 0 decays every frequency alike;
        /// 1 makes the decay at the Nyquist frequency ten times shorter than at DC.
        public var damping: Double
        /// The stereo width, 0 … 100 (`synth.reverb.width`): 0 gives both sides the same signal.
        public var width: Double
        /// The output level, 0 … 1 (`synth.reverb.level`).
        public var level: Double

        /// Settings with FluidSynth's defaults: room size 0.2, damping 0, width 0.5, level 0.9.
        public init(roomSize: Double = 0.2, damping: Double = 0, width: Double = 0.5, level: Double = 0.9) {
            self.roomSize = roomSize
            self.damping = damping
            self.width = width
            self.level = level
        }

        /// The decay time at DC in seconds at `sampleRate`: seconds for the tail to fall by 60 dB
        /// (0.98 s at the default room size and 44.1 kHz).
        public func reverberationTime(sampleRate: Double) -> Double {
            let longest = Double(SynthReverb.length(line: SynthReverb.lineCount - 1, sampleRate: sampleRate))
            let seconds = longest / sampleRate
            let shortestGain = pow(10, -3 * seconds / SynthReverb.shortestTime)
            let longestGain = pow(10, -3 * seconds / SynthReverb.longestTime)
            let room = min(max(roomSize, 0), 1)
            let gain = shortestGain + room * (longestGain - shortestGain)
            return -3 * seconds / log10(gain)
        }
    }

    static let lineCount = 8
    /// The lines' lengths at 44.1 kHz before doubling (mutually prime).
    static let baseLengths = [601, 691, 773, 839, 919, 997, 1061, 1129]
    /// The rate the lines are sized for.
    static let designRate = 96_000.0
    /// The decay times at DC that room sizes 0 and 1 give.
    static let shortestTime = 0.7
    static let longestTime = 12.5
    /// Modulation of the lines' lengths: depth in samples, rate in hertz, samples between updates.
    static let modulationDepth = 4.0
    static let modulationRate = 1.0
    static let modulationPeriod = 50

    /// Line `line`'s length in samples at `sampleRate`.
    static func length(line: Int, sampleRate: Double) -> Int {
        let scale = max(designRate, sampleRate) / 44_100
        return Int((Double(2 * baseLengths[line]) * scale).rounded())
    }

    /// The settings in use (set them with ``update(_:)``).
    public private(set) var settings: Settings
    /// The sample rate the reverb was made for.
    public let sampleRate: Double

    private let rings: RealTimeBuffer<Float>
    private let ringMask: Int
    private let ringSize: Int
    private var position = 0
    private var lengths = SIMD8<Double>.zero
    // Per-line loop gain (b) and damping pole (p): y = b·x + p·y₋₁.
    private var gains = SIMD8<Float>.zero
    private var poles = SIMD8<Float>.zero
    private var damped = SIMD8<Float>.zero
    // All-pass interpolation: the integer delays and coefficients of the current modulation step,
    // the last read and the last all-pass output per line.
    private var delays = SIMD8<Int>.zero
    private var coefficients = SIMD8<Float>.zero
    private var lastRead = SIMD8<Float>.zero
    private var lastAllPass = SIMD8<Float>.zero
    private var modulationCountdown = 0
    private var modulationPhase = 0.0
    // The tone corrector: t = (x − β·x₋₁)/(1 − β).
    private var toneBeta: Float = 0
    private var toneScale: Float = 1
    private var lastInput: Float = 0
    private var wet1: Float = 0
    private var wet2: Float = 0

    /// A reverb for `sampleRate` with `settings`, silent. Allocates its lines here.
    public init(sampleRate: Double, settings: Settings = Settings()) {
        self.sampleRate = sampleRate
        self.settings = settings
        let longest = Self.length(line: Self.lineCount - 1, sampleRate: sampleRate) + 2 * Int(Self.modulationDepth) + 4
        let bits = DelayRing.bits(above: longest)
        ringSize = 1 << bits
        ringMask = ringSize - 1
        rings = RealTimeBuffer(capacity: Self.lineCount * ringSize)
        for line in 0..<Self.lineCount {
            lengths[line] = Double(Self.length(line: line, sampleRate: sampleRate))
        }
        update(settings)
        modulate()
    }

    /// Applies `settings` (any thread that owns the reverb; allocates nothing). The tail goes on.
    public func update(_ settings: Settings) {
        self.settings = settings
        let dcTime = settings.reverberationTime(sampleRate: sampleRate)
        let damping = min(max(settings.damping, 0), 1)
        let nyquistTime = dcTime / (1 + 9 * damping)
        for line in 0..<Self.lineCount {
            let seconds = lengths[line] / sampleRate
            let dcGain = pow(10, -3 * seconds / dcTime)
            let nyquistGain = pow(10, -3 * seconds / nyquistTime)
            let pole = (dcGain - nyquistGain) / (dcGain + nyquistGain)
            gains[line] = Float(dcGain * (1 - pole))
            poles[line] = Float(pole)
        }
        // Jot's tone corrector: flattens the tail's spectrum that the damping tilts.
        let ratio = nyquistTime / dcTime
        let beta = (1 - ratio) / (1 + ratio)
        toneBeta = Float(beta)
        toneScale = Float(1 / (1 - beta))
        let width = min(max(settings.width, 0), 100)
        let wet = min(max(settings.level, 0), 1) * 5 / (1 + 0.2 * width)
        wet1 = Float(wet * (width / 2 + 0.5))
        wet2 = Float(wet * (1 - width) / 2)
    }

    /// Forgets the tail: every line silent (the owner's thread; allocates nothing).
    public func reset() {
        rings.clear()
        damped = .zero
        lastRead = .zero
        lastAllPass = .zero
        lastInput = 0
        modulationPhase = 0
        modulationCountdown = 0
        modulate()
    }

    /// The next modulation step: each line's delay as an integer read and an all-pass fraction
    /// between 0.5 and 1.5 samples (where first-order all-pass interpolation is well behaved). The
    /// delay swings between the line's length and 8 samples more, falling first (as measured).
    private func modulate() {
        for line in 0..<Self.lineCount {
            let phase = modulationPhase + Double(line) * Double.pi / 4
            let delay = lengths[line] + Self.modulationDepth * (1 - sin(phase))
            let read = Int((delay - 0.5).rounded(.down))
            let allPass = delay - Double(read)
            delays[line] = read
            coefficients[line] = Float((1 - allPass) / (1 + allPass))
        }
        modulationPhase += 2 * Double.pi * Self.modulationRate * Double(Self.modulationPeriod) / sampleRate
        if modulationPhase > 2 * Double.pi { modulationPhase -= 2 * Double.pi }
        modulationCountdown = Self.modulationPeriod
    }

    /// Runs `count` frames of `input` (the mono send) through the reverb and adds the stereo
    /// output into `left` and `right`.
    public func process(
        _ input: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        count: Int
    ) {
        let rings = self.rings.base
        let (mask, size) = (ringMask, ringSize)
        let leftSigns = SIMD8<Float>(1, -1, 1, -1, 1, -1, 1, -1)
        let rightSigns = SIMD8<Float>(1, 1, -1, -1, 1, 1, -1, -1)
        var (damped, lastRead, lastAllPass) = (self.damped, self.lastRead, self.lastAllPass)
        var lastInput = self.lastInput
        var position = self.position
        for frame in 0..<count {
            if modulationCountdown == 0 { modulate() }
            modulationCountdown &-= 1
            var read = SIMD8<Float>.zero
            for line in 0..<8 {
                read[line] = rings[line &* size &+ ((position &- delays[line]) & mask)]
            }
            let allPass = coefficients * (read - lastAllPass) + lastRead
            lastRead = read
            lastAllPass = allPass
            damped = gains * allPass + poles * damped
            damped = Subnormals.flushed(damped)
            let x = input[frame] * 0.1
            let toned = (x - toneBeta * lastInput) * toneScale
            lastInput = x
            let outLeft = (damped * leftSigns).sum()
            let outRight = (damped * rightSigns).sum()
            left[frame] += wet1 * outLeft + wet2 * outRight
            right[frame] += wet1 * outRight + wet2 * outLeft
            let rotated = SIMD8<Float>(
                damped[1], damped[2], damped[3], damped[4], damped[5], damped[6], damped[7], damped[0])
            let feedback = Subnormals.flushed(rotated - 0.25 * damped.sum() + toned)
            for line in 0..<8 { rings[line &* size &+ position] = feedback[line] }
            position = (position &+ 1) & mask
        }
        self.damped = damped
        self.lastRead = lastRead
        self.lastAllPass = lastAllPass
        self.lastInput = lastInput
        self.position = position
    }
}
