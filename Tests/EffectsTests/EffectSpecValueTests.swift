import Testing

@testable import Effects

@Suite("Effect specs made in code: EffectChain checks their values against the parameter tables")
struct EffectSpecValueTests {
    /// Specs from `EffectSpec.init` with values that once indexed past a table and trapped, and the error
    /// `makeNodes` throws for each instead.
    static let outOfRange: [(spec: EffectSpec, message: String)] = [
        (
            EffectSpec(name: "eq", values: ["band": 0]),
            "eq: band=0 is out of range 1…16"
        ),
        (
            EffectSpec(name: "eq", values: ["band": -3, "gain": -6]),
            "eq: band=-3 is out of range 1…16"
        ),
        (
            EffectSpec(name: "reverb", values: ["preset": 99]),
            "reverb: preset=99 is not the index of a choice, 0…\(ReverbPreset.table.count - 1) ("
                + ReverbPreset.table.map(\.rawValue).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "reverb", values: ["preset": -1]),
            "reverb: preset=-1 is not the index of a choice, 0…\(ReverbPreset.table.count - 1) ("
                + ReverbPreset.table.map(\.rawValue).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "compressor", values: ["detector": 2]),
            "compressor: detector=2 is not the index of a choice, 0…1 (peak, rms)"
        ),
        (
            EffectSpec(name: "filter", values: ["type": Double(FilterType.allCases.count)]),
            "filter: type=\(FilterType.allCases.count) is not the index of a choice, 0…\(FilterType.allCases.count - 1) ("
                + FilterType.allCases.map(\.rawValue).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "eq", values: ["type": -1]),
            "eq: type=-1 is not the index of a choice, 0…\(FilterType.allCases.count - 1) ("
                + FilterType.allCases.map(\.rawValue).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "distortion", values: ["preset": Double(DistortionPreset.all.count + 1)]),
            "distortion: preset=\(DistortionPreset.all.count + 1) is not the index of a choice, "
                + "0…\(DistortionPreset.all.count) (none, "
                + DistortionPreset.all.map(\.name).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "distortion", values: ["type": 9]),
            "distortion: type=9 is not the index of a choice, 0…\(DistortionNode.Shape.allCases.count - 1) ("
                + DistortionNode.Shape.allCases.map(\.rawValue).joined(separator: ", ") + ")"
        ),
        (
            EffectSpec(name: "distortion", values: ["oversampling": 70]),
            "distortion: oversampling=70 is not the index of a choice, 0…3 (1, 2, 4, 8)"
        ),
        (EffectSpec(name: "limiter", values: ["truePeak": 2]), "limiter: truePeak=2 must be 0 (off) or 1 (on)"),
        (EffectSpec(name: "reverb", values: ["mix": 150]), "reverb: mix=150 is out of range 0…100 %"),
        (EffectSpec(name: "eq", values: ["band": .nan]), "eq: band=nan is not a number"),
        (EffectSpec(name: "reverb", values: ["preset": .infinity]), "reverb: preset=inf is not a number"),
        (
            EffectSpec(name: "delay", values: ["note": -0.25]),
            "delay: note=-0.25 is not a note value (a fraction of a whole note)"
        ),
    ]

    @Test("an index or number outside its parameter's range is an EffectSpecError, not a trap", arguments: outOfRange)
    func outOfRangeValues(spec: EffectSpec, message: String) {
        #expect(throws: EffectSpecError(message)) { try EffectChain.makeNodes([spec]) }
        #expect(throws: EffectSpecError(message)) { try EffectChain([spec], sampleRate: 48_000) }
    }

    @Test("a bad value in the second of a run of eq bands is found too; values in range still make nodes")
    func inRangeValues() throws {
        #expect(throws: EffectSpecError("eq: band=0 is out of range 1…16")) {
            try EffectChain.makeNodes([
                EffectSpec(name: "eq", values: ["band": 1]), EffectSpec(name: "eq", values: ["band": 0]),
            ])
        }
        let nodes = try EffectChain.makeNodes([
            EffectSpec(name: "eq", values: ["band": 16, "type": 0]),
            EffectSpec(name: "reverb", values: ["preset": Double(ReverbPreset.table.count - 1)]),
            EffectSpec(name: "compressor", values: ["detector": 1]),
            EffectSpec(name: "distortion", values: ["preset": Double(DistortionPreset.all.count)]),
        ])
        #expect(nodes.count == 4)
        #expect((nodes[0] as? EQNode)?.bands.count == 16)
    }

    @Test("format prints infinities and huge whole numbers without trapping")
    func formatExtremes() {
        #expect(EffectSpec.format(.infinity) == "inf")
        #expect(EffectSpec.format(-.infinity) == "-inf")
        #expect(EffectSpec.format(1e300) == "1e+300")
        #expect(EffectSpec.format(-12) == "-12")
    }

    @Test("an unknown effect points to EffectSpec.catalog, not to a command")
    func unknownEffectWording() {
        let known = EffectSpec.catalog.map(\.name).joined(separator: ", ")
        #expect(throws: EffectSpecError("unknown effect 'chorus' (known: \(known); see EffectSpec.catalog)")) {
            try EffectSpec.parse("chorus")
        }
        #expect(throws: EffectSpecError("unknown effect 'chorus' (see EffectSpec.catalog)")) {
            try EffectChain.makeNodes([EffectSpec(name: "chorus")])
        }
    }
}
