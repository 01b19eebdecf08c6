import AudioGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A chorus set up as FluidSynth 2.3's: a mono input, a stereo output meant to be added to the
/// dry signal, and FluidSynth's defaults (3 voices, level 2, 0.3 Hz, 8 ms, sine).
///
/// Built from FluidSynth's published structure, not its code: one delay line read by `voiceCount`
/// taps, each swept by its own low-frequency oscillator (the oscillators' phases spread evenly over
/// a cycle) between half a sample and the depth's delay, through first-order all-pass
/// interpolation. The taps go alternately to the left and the right output, and with an odd count
/// the last goes to both (as measured with three); the two outputs are crossed (a fixed width of
/// 10) and scaled by `level`. Measured against libfluidsynth 2.3 with its defaults through the
/// same send, the wet signal's waveform correlates at 0.999 with these taps.
///
/// Usable outside a graph: make it for a sample rate, then call ``process(_:left:right:count:)``
/// from one thread at a time. Processing allocates nothing and takes no lock.
///
/// ```swift
/// let chorus = Chorus(sampleRate: 44_100)
/// chorus.process(send, left: left, right: right, count: 512)  // adds the wet signal
/// ```
public final class Chorus {
    /// The shape of the voices' sweep.
    public enum Waveform: String, Sendable, Hashable, CaseIterable {
        /// A sine (FluidSynth's default).
        case sine
        /// A triangle: the delay moves at a constant speed, turning at the ends.
        case triangle
    }

    /// What a ``Chorus`` is set up with: FluidSynth's chorus settings and their defaults.
    public struct Settings: Sendable, Hashable {
        /// Voices (delay taps), 0 … 99 (FluidSynth's `synth.chorus.nr`; 0 is silent).
        public var voiceCount: Int
        /// The output level, 0 … 10 (`synth.chorus.level`).
        public var level: Double
        /// The sweep's rate in hertz, 0.1 … 5 (`synth.chorus.speed`).
        public var speed: Double
        /// The sweep's depth in milliseconds, 0 … 256 (`synth.chorus.depth`): the delay moves over
        /// half of it each side of its centre, and at most over the line's 2048 samples (at 44.1 kHz).
        public var depth: Double
        /// The sweep's shape.
        public var waveform: Waveform

        /// Settings with FluidSynth's defaults: 3 voices, level 2, 0.3 Hz, 8 ms, a sine.
        public init(
            voiceCount: Int = 3, level: Double = 2, speed: Double = 0.3, depth: Double = 8, waveform: Waveform = .sine
        ) {
            self.voiceCount = voiceCount
            self.level = level
            self.speed = speed
            self.depth = depth
            self.waveform = waveform
        }
    }

    /// The most voices.
    public static let maximumVoiceCount = 99
    /// The shortest delay of a tap, in samples.
    static let minimumDelay = 0.5

    /// The settings in use (set them with ``update(_:)``).
    public private(set) var settings: Settings
    /// The sample rate the chorus was made for.
    public let sampleRate: Double

    private let line: RealTimeBuffer<Float>
    private let mask: Int
    /// Each voice's phase offset as cosine and sine, and its last all-pass output.
    private let offsetCosines = RealTimeBuffer<Double>(capacity: Chorus.maximumVoiceCount)
    private let offsetSines = RealTimeBuffer<Double>(capacity: Chorus.maximumVoiceCount)
    private let offsets = RealTimeBuffer<Double>(capacity: Chorus.maximumVoiceCount)
    private let lastOutputs = RealTimeBuffer<Float>(capacity: Chorus.maximumVoiceCount)
    private var position = 0
    private var voices = 0
    /// The sweep: half its depth in samples, its centre, its phase (cycles) and the phase's
    /// step; the sine's phasor.
    private var swing = 0.0
    private var centre = 0.0
    private var step = 0.0
    /// (The sweep starts half a cycle in: the first voice's delay falls from the centre first.)
    private var phase = 0.5
    private var phasor = (cos: -1.0, sin: 0.0)
    private var rotation = (cos: 1.0, sin: 0.0)
    private var wet1: Float = 0
    private var wet2: Float = 0

    /// A chorus for `sampleRate` with `settings`, silent. Allocates its line here.
    public init(sampleRate: Double, settings: Settings = Settings()) {
        self.sampleRate = sampleRate
        self.settings = settings
        let size = 1 << DelayRing.bits(above: Int(2048 * max(1, sampleRate / 44_100)) - 1)
        mask = size - 1
        line = RealTimeBuffer(capacity: size)
        update(settings)
    }

    /// Applies `settings` (the owner's thread; allocates nothing). The sweep goes on from where it is.
    public func update(_ settings: Settings) {
        self.settings = settings
        voices = min(max(settings.voiceCount, 0), Self.maximumVoiceCount)
        for voice in 0..<voices {
            let offset = Double(voice) / Double(voices)
            offsets[voice] = offset
            offsetCosines[voice] = cos(2 * Double.pi * offset)
            offsetSines[voice] = sin(2 * Double.pi * offset)
        }
        let depthSamples = Double(Int(min(max(settings.depth, 0), 256) * sampleRate / 1000)) / 2
        swing = min(depthSamples, (Double(mask) - 4 - Self.minimumDelay) / 2)
        centre = swing + Self.minimumDelay
        step = min(max(settings.speed, 0.1), 5) / sampleRate
        rotation = (cos(2 * Double.pi * step), sin(2 * Double.pi * step))
        let wet = min(max(settings.level, 0), 10) / 3
        wet1 = Float(wet * 5.5)
        wet2 = Float(wet * -4.5)
    }

    /// Forgets the line and restarts the sweep (the owner's thread; allocates nothing).
    public func reset() {
        line.clear()
        lastOutputs.clear()
        phase = 0.5
        phasor = (-1, 0)
    }

    /// Runs `count` frames of `input` (the mono send) through the chorus and adds the stereo
    /// output into `left` and `right`.
    public func process(
        _ input: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        count: Int
    ) {
        let line = self.line.base
        let outputs = lastOutputs.base
        let mask = self.mask
        let sine = settings.waveform == .sine
        var position = self.position
        var phase = self.phase
        var phasor = self.phasor
        // With an odd count, the last voice goes to both sides.
        let last = voices & 1 == 1 ? voices - 1 : -1
        for frame in 0..<count {
            line[position] = input[frame]
            var sides: (Float, Float) = (0, 0)
            for voice in 0..<voices {
                let sweep: Double
                if sine {
                    sweep = phasor.sin * offsetCosines[voice] + phasor.cos * offsetSines[voice]
                } else {
                    var cycle = phase + offsets[voice]
                    cycle -= cycle.rounded(.down)
                    // 0 at the cycle's start, 1 at a quarter, −1 at three quarters.
                    sweep = cycle < 0.25 ? 4 * cycle : (cycle < 0.75 ? 2 - 4 * cycle : 4 * cycle - 4)
                }
                let delay = centre + swing * sweep
                let whole = Int((delay - 0.5).rounded(.down))
                let fraction = Float(delay - Double(whole))
                let coefficient = (1 - fraction) / (1 + fraction)
                let newer = line[(position &- whole) & mask]
                let older = line[(position &- whole &- 1) & mask]
                let output = coefficient * (newer - outputs[voice]) + older
                outputs[voice] = output
                if voice & 1 == 1 {
                    sides.1 += output
                } else {
                    sides.0 += output
                    if voice == last { sides.1 += output }
                }
            }
            left[frame] += wet1 * sides.0 + wet2 * sides.1
            right[frame] += wet1 * sides.1 + wet2 * sides.0
            position = (position &+ 1) & mask
            phasor = (
                phasor.cos * rotation.cos - phasor.sin * rotation.sin,
                phasor.sin * rotation.cos + phasor.cos * rotation.sin
            )
            phase += step
        }
        // Keep the phasor on the unit circle and the phase in one cycle.
        let magnitude = (phasor.cos * phasor.cos + phasor.sin * phasor.sin).squareRoot()
        self.phasor = (phasor.cos / magnitude, phasor.sin / magnitude)
        self.phase = phase - phase.rounded(.down)
        self.position = position
    }
}
