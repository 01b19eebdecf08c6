import AudioGraph

/// One filter band as a node: the counterpart of an AVAudioUnitEQ with one band, not bypassed.
public final class FilterNode: AudioNode, @unchecked Sendable {
    private let eq: EQNode
    /// The band (type, frequency, gain, bandwidth, bypass).
    public var band: EQBand { eq.bands[0] }
    /// The coefficient design: the Audio EQ Cookbook (default) or matched to the analog prototype up
    /// to Nyquist (may change while playing; the change glides).
    public var design: FilterDesign {
        get { eq.design }
        set { eq.design = newValue }
    }

    /// The parameter table: a band's (`EQNode.bandParameters`) without bypass, low-pass by default.
    public static let parameters: [EffectParameter] = EQNode.bandParameters.filter { $0.identifier != "bypass" }.map {
        $0.identifier == "type"
            ? EffectParameter(
                "type", $0.name, range: $0.range, default: Double(FilterType.allCases.firstIndex(of: .lowPass)!),
                unit: .choice, choices: $0.choices) : $0
    }

    /// A filter band, not bypassed.
    public init(type: FilterType = .lowPass, frequency: Double = 1_000, gain: Double = 0, bandwidth: Double = 1) {
        eq = EQNode(
            band: FilterBand(type: type, frequency: frequency, gain: gain, bandwidth: bandwidth), name: "filter")
        super.init(name: "filter")
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int {
        eq.outputChannelCount(inputChannelCounts: inputChannelCounts)
    }
    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        try eq.prepare(format: format, maximumFrameCount: maximumFrameCount)
    }
    public override func reset() { eq.reset() }
    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        eq.render(into: output, inputs: inputs, frameCount: frameCount, time: time)
    }
}
