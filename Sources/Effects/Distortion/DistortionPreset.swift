/// A named setting of every `DistortionNode` parameter, in the spirit of AVAudioUnitDistortion's
/// factory presets (the names follow Apple's families: `drums…`, `multi…`, `speech…`; the voicings
/// are Pianola's own).
public struct DistortionPreset: Hashable, Sendable {
    /// The name, as `--fx distortion:preset=NAME` takes it.
    public let name: String
    /// What it is for.
    public let summary: String
    /// The shaper.
    public let shape: DistortionNode.Shape
    /// Gain into the shaper, dB.
    public let drive: Double
    /// The low-pass after the shaper, Hz.
    public let tone: Double
    /// Percent of the distorted signal in the output.
    public let mix: Double
    /// Gain of the distorted signal, dB.
    public let level: Double
    /// For `.bitCrush`: the resolution, bits.
    public let bits: Double
    /// For `.bitCrush`: the rate reduction (each sample held this many).
    public let downsample: Double
    /// For `.ringModulator`: the carrier, Hz.
    public let carrier: Double

    init(
        _ name: String, _ summary: String, _ shape: DistortionNode.Shape, drive: Double, tone: Double, mix: Double,
        level: Double = 0, bits: Double = 8, downsample: Double = 4, carrier: Double = 100
    ) {
        self.name = name
        self.summary = summary
        self.shape = shape
        self.drive = drive
        self.tone = tone
        self.mix = mix
        self.level = level
        self.bits = bits
        self.downsample = downsample
        self.carrier = carrier
    }

    /// The presets, in the order `pianola fx list` shows them:
    ///
    /// - `warmTube`: the tube curve lightly driven (8 dB), everything above 12 kHz rolled off: even
    ///   harmonics that thicken a sound without audible breakup.
    /// - `crunch`: tanh at 20 dB, tone 7 kHz: an overdriven amplifier.
    /// - `fuzz`: the hard clip at 40 dB, tone 5 kHz, −10 dB level: a near-square fuzz box.
    /// - `drumsBitBrush`: 6 bits at a quarter of the rate, 60 % into the dry drums: grit on the
    ///   transients that keeps their body.
    /// - `drumsLoFi`: 10 bits at a sixth of the rate, tone 5 kHz: an early sampler.
    /// - `multiBrokenSpeaker`: the hard clip at 30 dB through a 3.5 kHz tone: a cone that rattles.
    /// - `multiDistortedFunk`: the tube curve at 18 dB, 70 % wet, tone 7 kHz: a driven clavinet.
    /// - `multiEverythingIsBroken`: fold-back at 14 dB, 80 % wet: metallic, harmonically unstable.
    /// - `speechRadioTower`: tanh at 24 dB into a 3 kHz tone: a voice through an overloaded radio.
    /// - `speechAlienChatter`: a ring modulator at 140 Hz, fully wet: the classic robot voice.
    public static let all: [DistortionPreset] = [
        DistortionPreset("warmTube", "tube curve, light drive", .tube, drive: 8, tone: 12_000, mix: 100, level: -2),
        DistortionPreset(
            "crunch", "tanh, overdriven amplifier", .softClip, drive: 20, tone: 7_000, mix: 100, level: -4),
        DistortionPreset(
            "fuzz", "hard clip, near-square fuzz", .hardClip, drive: 40, tone: 5_000, mix: 100, level: -10),
        DistortionPreset(
            "drumsBitBrush", "6-bit, quarter rate, parallel", .bitCrush, drive: 6, tone: 9_000, mix: 60, bits: 6,
            downsample: 4),
        DistortionPreset(
            "drumsLoFi", "10-bit, sixth rate, dark", .bitCrush, drive: 0, tone: 5_000, mix: 100, bits: 10, downsample: 6
        ),
        DistortionPreset(
            "multiBrokenSpeaker", "hard clip into a narrow tone", .hardClip, drive: 30, tone: 3_500, mix: 100, level: -8
        ),
        DistortionPreset(
            "multiDistortedFunk", "tube curve, 70 % wet", .tube, drive: 18, tone: 7_000, mix: 70, level: -4),
        DistortionPreset(
            "multiEverythingIsBroken", "fold-back, metallic", .foldback, drive: 14, tone: 8_000, mix: 80, level: -6),
        DistortionPreset(
            "speechRadioTower", "tanh into a 3 kHz tone", .softClip, drive: 24, tone: 3_000, mix: 100, level: -6),
        DistortionPreset(
            "speechAlienChatter", "ring modulator at 140 Hz", .ringModulator, drive: 0, tone: 12_000, mix: 100,
            carrier: 140),
    ]
}

extension EffectSpec {
    /// The node a `distortion` spec describes: its preset's values (if it names one), then its own keys.
    func distortion() -> DistortionNode {
        let node = DistortionNode()
        // Without a preset every setting is the spec's or the table's; a preset's are kept where the
        // spec gives none (a preset has no oversampling: the spec's or the table's).
        let preset = Int(value(of: "preset"))
        if preset >= 1 { node.load(DistortionPreset.all[preset - 1]) }
        let setting = { (key: String) -> Double? in preset >= 1 ? values[key] : value(of: key) }
        if let type = setting("type") { node.shape = DistortionNode.Shape.allCases[Int(type)] }
        if let drive = setting("drive") { node.drive = drive }
        if let tone = setting("tone") { node.tone = tone }
        if let mix = setting("mix") { node.wetDryMix = mix }
        if let level = setting("level") { node.level = level }
        if let bits = setting("bits") { node.bits = bits }
        if let downsample = setting("downsample") { node.downsample = downsample }
        if let carrier = setting("carrier") { node.carrier = carrier }
        node.oversampling = 1 << Int(value(of: "oversampling"))
        return node
    }
}
