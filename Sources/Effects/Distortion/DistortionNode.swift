import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// A distortion unit, the counterpart of AVAudioUnitDistortion: drive into a shaper, a tone
/// control (a low-pass after it), an output level and a wet/dry mix, with named presets.
///
/// The curves (`soft` tanh, `hard` clip, asymmetric `tube`, `fold`-back) and the `ring`
/// modulator run eight times oversampled (see `Oversampler`), the curves with second-order
/// antiderivative anti-aliasing on top: a full-scale 5 kHz sine driven 60 dB into the hard clip
/// at 48 kHz leaves its aliases about 87 dB below the signal, where plain 8× oversampling leaves
/// them 32 dB below. `bitcrush` (quantization to `bits` and a sample-and-hold at 1/`downsample`
/// of the rate) runs at the base rate: its aliasing is the sound. The tube curve's DC offset is
/// removed (a 10 Hz high-pass on the distorted signal).
///
/// Every shape delays the signal by `latency` (58) frames, the oversampling filters' delay; the
/// dry signal is delayed to match, and `process`/render compensate it, as for a look-ahead. A mix
/// of 0 is the (delayed) input bit for bit. Drive, level and mix ramp over a quantum; the tone
/// glides over 20 ms; a change of shape takes effect at the next quantum.
///
/// ```swift
/// let fuzz = DistortionNode(shape: .hardClip, drive: 40, tone: 5_000)
/// let radio = DistortionNode(preset: "speechRadioTower")
/// ```
public final class DistortionNode: AudioNode, @unchecked Sendable {
    /// The shaper.
    public enum Shape: String, CaseIterable, Sendable {
        /// tanh: rounded saturation, odd harmonics.
        case softClip = "soft"
        /// Clipped at ±1: a square at high drive.
        case hardClip = "hard"
        /// Asymmetric: tanh above zero, tanh(2x)/2 below: even harmonics as well.
        case tube
        /// Folds back at ±1 (a triangle wave of the input): metallic, inharmonic at high drive.
        case foldback = "fold"
        /// Quantized to `bits` and held for `downsample` samples: lo-fi.
        case bitCrush = "bitcrush"
        /// Multiplied by a sine at `carrier` Hz: sum and difference tones, the robot voice.
        case ringModulator = "ring"
    }

    /// `Shape.allCases` once (a fresh array on each use would allocate on the audio thread).
    private static let shapes = Shape.allCases

    /// The shaper (default `.softClip`).
    public var shape: Shape {
        get { Self.shapes[Int(shapeSetting.value)] }
        set { shapeSetting.set(Double(Shape.allCases.firstIndex(of: newValue)!)) }
    }
    /// Gain into the shaper, dB, 0 … 60.
    public var drive: Double {
        get { driveSetting.value }
        set { driveSetting.set(newValue) }
    }
    /// The cutoff of the low-pass after the shaper (second-order Butterworth), Hz; at or above the
    /// Nyquist frequency it is off.
    public var tone: Double {
        get { toneSetting.value }
        set { toneSetting.set(newValue) }
    }
    /// Percent of distorted signal in the output, 0 (the input, bit for bit) … 100.
    public var wetDryMix: Double {
        get { mixSetting.value }
        set { mixSetting.set(newValue) }
    }
    /// Gain of the distorted signal, dB, −40 … 20.
    public var level: Double {
        get { levelSetting.value }
        set { levelSetting.set(newValue) }
    }
    /// `.bitCrush`'s resolution in bits, 1 … 16 (fractions allowed: 2^(bits−1) steps per unit).
    public var bits: Double {
        get { bitsSetting.value }
        set { bitsSetting.set(newValue) }
    }
    /// `.bitCrush`'s rate reduction: a sample is held for this many, 1 … 64 (fractions allowed).
    public var downsample: Double {
        get { downsampleSetting.value }
        set { downsampleSetting.set(newValue) }
    }
    /// `.ringModulator`'s carrier, Hz, 1 … 8000.
    public var carrier: Double {
        get { carrierSetting.value }
        set { carrierSetting.set(newValue) }
    }

    /// The oversampling of the curves and the ring modulator: 8 (the default), 4, 2 or 1 (none;
    /// other values are taken to the nearest of these). Each halving roughly halves the cost and
    /// lets more aliasing through: a full-scale 5 kHz sine driven 60 dB leaves aliases at about
    /// −87, −70, −48 and −24 dB (with antiderivative anti-aliasing at every factor; a plain
    /// shaper without oversampling leaves −12 dB). Changing it takes effect at the next quantum and
    /// restarts the filters (a click if sound is passing). The latency stays 58 frames.
    public var oversampling: Int {
        get { 1 << Int(oversamplingSetting.value.rounded()) }
        set { oversamplingSetting.set(log2(Double(max(1, newValue))).rounded()) }
    }

    /// The delay of every shape, in frames (the dry signal is delayed as much).
    public var latency: Int { Oversampler.latency }

    /// The parameter table of the `distortion` effect.
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "preset", "a named setting (the other keys change it)", range: 0...Double(DistortionPreset.all.count),
            default: 0, unit: .choice, choices: ["none"] + DistortionPreset.all.map(\.name)),
        EffectParameter(
            "type", "shaper", range: 0...Double(Shape.allCases.count - 1), default: 0, unit: .choice,
            choices: Shape.allCases.map(\.rawValue)),
        EffectParameter("drive", "gain into the shaper", range: 0...60, default: 20, unit: .decibels),
        EffectParameter(
            "tone", "low-pass after the shaper (at Nyquist or above: off)", range: 100...96_000, default: 12_000,
            unit: .hertz),
        EffectParameter("mix", "wet/dry mix", range: 0...100, default: 100, unit: .percent),
        EffectParameter("level", "gain of the distorted signal", range: -40...20, default: 0, unit: .decibels),
        EffectParameter("bits", "bitcrush: resolution", range: 1...16, default: 8, unit: .number),
        EffectParameter("downsample", "bitcrush: hold each sample this many", range: 1...64, default: 4, unit: .number),
        EffectParameter("carrier", "ring: carrier frequency", range: 1...8_000, default: 100, unit: .hertz),
        EffectParameter(
            "oversampling", "factor for the curves and ring (8: aliases < -80 dB at full drive)", range: 0...3,
            default: 3, unit: .choice, choices: ["1", "2", "4", "8"]),
    ]

    private let shapeSetting = AtomicParameter(0, "type", in: parameters)
    private let driveSetting = AtomicParameter(20, "drive", in: parameters)
    private let toneSetting = AtomicParameter(12_000, "tone", in: parameters)
    private let mixSetting = AtomicParameter(100, "mix", in: parameters)
    private let levelSetting = AtomicParameter(0, "level", in: parameters)
    private let bitsSetting = AtomicParameter(8, "bits", in: parameters)
    private let downsampleSetting = AtomicParameter(4, "downsample", in: parameters)
    private let carrierSetting = AtomicParameter(100, "carrier", in: parameters)
    private let oversamplingSetting = AtomicParameter(3, "oversampling", in: parameters)
    private var factorNow = 8
    private var shapeNow = Shape.softClip

    // Render state, allocated in prepare.
    private static let blockSize = 64
    private var sampleRate = 48_000.0
    private var oversampler = Oversampler(channelCount: 0, blockSize: 1)
    private var kernel = DistortionKernel(channelCount: 0, blockSize: 1)
    private var gainNow: Float = 1
    private var mixNow: Float = 1
    private var levelNow: Float = 1
    private var toneNow = 0.0
    private var designedTone = -1.0

    /// A distortion with the given settings (the defaults: tanh driven 20 dB, tone 12 kHz, fully wet).
    public init(
        shape: Shape = .softClip, drive: Double = 20, tone: Double = 12_000, wetDryMix: Double = 100, level: Double = 0
    ) {
        super.init(name: "distortion")
        self.shape = shape
        self.drive = drive
        self.tone = tone
        self.wetDryMix = wetDryMix
        self.level = level
    }

    /// A distortion set to the preset `preset` (one of `DistortionPreset.all`'s names; nil if none is).
    public convenience init?(preset: String) {
        guard let found = DistortionPreset.all.first(where: { $0.name == preset }) else { return nil }
        self.init()
        load(found)
    }

    /// Sets every parameter to `preset`'s values.
    public func load(_ preset: DistortionPreset) {
        shape = preset.shape
        drive = preset.drive
        tone = preset.tone
        wetDryMix = preset.mix
        level = preset.level
        bits = preset.bits
        downsample = preset.downsample
        carrier = preset.carrier
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
    public override func accepts(_ format: AudioFormat, onBus bus: Int) -> Bool {
        (1...8).contains(format.channelCount)
    }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        // The lazily made statics, made here rather than on the audio thread.
        _ = SoftClipTable.shared.correction(0)
        _ = Self.shapes
        oversampler = Oversampler(channelCount: format.channelCount, blockSize: Self.blockSize)
        kernel = DistortionKernel(channelCount: format.channelCount, blockSize: Self.blockSize)
        kernel.dcCoefficient = 1 - 2 * Double.pi * 10 / sampleRate
        reset()
    }

    /// Silences every filter and line and sets every parameter to its value at once.
    public override func reset() {
        oversampler.clear()
        kernel.clear()
        factorNow = oversampling
        shapeNow = shape
        gainNow = Float(pow(10, drive / 20))
        mixNow = Float(wetDryMix / 100)
        levelNow = Float(pow(10, level / 20))
        toneNow = tone
        designedTone = -1
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0], kernel.channelCount > 0 else {
            output.clear(frames: frameCount)
            return
        }
        let shape = self.shape
        let count = Float(frameCount)
        let gainTarget = Float(pow(10, drive / 20))
        let mixTarget = Float(wetDryMix / 100)
        let levelTarget = Float(pow(10, level / 20))
        var ramps = DistortionKernel.Ramps(
            gain: gainNow, gainStep: (gainTarget - gainNow) / count, mix: mixNow, mixStep: (mixTarget - mixNow) / count,
            level: levelNow, levelStep: (levelTarget - levelNow) / count)
        (gainNow, mixNow, levelNow) = (gainTarget, mixTarget, levelTarget)
        glideTone(frameCount: frameCount)
        kernel.bits = Float(bits)
        kernel.downsample = downsample
        let factor = oversampling
        if factor != factorNow {
            factorNow = factor
            oversampler.clear()
            kernel.clearWet()
        }
        if shape != shapeNow {
            if kernel.change(from: shapeNow, to: shape) { oversampler.clear() }
            shapeNow = shape
        }
        kernel.factor = factor
        kernel.carrierStep = 2 * Double.pi * carrier / (sampleRate * Double(factor))
        let channelCount = min(kernel.channelCount, output.channelCount)
        var offset = 0
        while offset < frameCount {
            let n = min(Self.blockSize, frameCount - offset)
            kernel.prepareBlock(count: n, shape: shape)
            for channel in 0..<channelCount {
                kernel.process(
                    channel: channel, input.channel(min(channel, input.channelCount - 1)) + offset,
                    into: output.channel(channel) + offset, count: n, shape: shape, ramps: ramps,
                    oversampler: oversampler)
            }
            kernel.advance(by: n, shape: shape)
            ramps.advance(by: n)
            offset += n
        }
        for channel in channelCount..<output.channelCount {
            output.channel(channel).update(repeating: 0, count: frameCount)
        }
    }

    /// The tone glides geometrically, at most 20 ms to its target; the coefficients are designed
    /// only when it moved.
    private func glideTone(frameCount: Int) {
        toneNow = glide(toneNow, to: tone, frames: frameCount, sampleRate: sampleRate)
        if toneNow != designedTone {
            designedTone = toneNow
            kernel.tone =
                toneNow < 0.499 * sampleRate
                ? BiquadCoefficients(
                    FilterBand(type: .lowPass, frequency: toneNow, gain: 0, bandwidth: 1), sampleRate: sampleRate) : nil
        }
    }
}
