import AudioGraph
import RateAndPitch
import Testing

@testable import Effects
@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

/// What a node made from a spec of `effect` runs, by parameter key, read back from the node.
private func running(_ node: AudioNode, effect: String) -> [String: Double] {
    let index = { (found: Int?) in Double(found ?? -1) }
    let flag = { (on: Bool) in on ? 1.0 : 0 }
    let band = { (band: EQBand) -> [String: Double] in
        [
            "type": index(FilterType.allCases.firstIndex(of: band.filterType)), "freq": band.frequency,
            "gain": band.gain, "bw": band.bandwidth, "q": FilterBand.q(forBandwidth: band.bandwidth),
        ]
    }
    switch node {
    case let eq as EQNode:
        // One band, band 1, not bypassed.
        return band(eq.bands[0]).merging([
            "bypass": flag(eq.bands[0].bypass), "band": Double(eq.bands.count), "global": eq.globalGain,
            "matched": flag(eq.design == .matched),
        ]) { $1 }
    case let filter as FilterNode:
        return band(filter.band).merging(["matched": flag(filter.design == .matched)]) { $1 }
    case let reverb as ReverbNode:
        return ["preset": index(ReverbPreset.table.firstIndex(of: reverb.preset)), "mix": reverb.wetDryMix]
    case let limiter as LimiterNode:
        return [
            "attack": limiter.attack, "release": limiter.release, "preGain": limiter.preGain,
            "ceiling": limiter.ceiling, "truePeak": flag(limiter.truePeak),
        ]
    case let compressor as DynamicsProcessorNode:
        return [
            "threshold": compressor.threshold, "ratio": compressor.ratio, "knee": compressor.kneeWidth,
            "attack": compressor.attackTime, "release": compressor.releaseTime, "makeup": compressor.makeUpGain,
            "lookahead": compressor.lookAhead,
            "detector": index(DynamicsProcessorNode.Detector.allCases.firstIndex(of: compressor.detector)),
            "expansionRatio": compressor.expansionRatio, "expansionThreshold": compressor.expansionThreshold,
            "link": flag(compressor.isLinked),
        ]
    case let delay as DelayNode:
        // `tempo` times a note value: a quarter note without a tempo (and no song's) lasts 60/tempo s.
        let quarter = try? EffectSpec.engineNodes([EffectSpec(name: "delay", values: ["note": 0.25])]).first
        return [
            "time": delay.delayTime, "feedback": delay.feedback, "lowpass": delay.lowPassCutoff, "mix": delay.wetDryMix,
            "tempo": (quarter as? DelayNode).map { 60 / $0.delayTime } ?? -1,
        ]
    case let distortion as DistortionNode:
        // No preset ("none"): every setting below is the table's own.
        let settings = [
            distortion.drive, distortion.tone, distortion.wetDryMix, distortion.level, distortion.bits,
            distortion.downsample, distortion.carrier,
        ]
        let preset = DistortionPreset.all.firstIndex {
            [$0.drive, $0.tone, $0.mix, $0.level, $0.bits, $0.downsample, $0.carrier] == settings
                && $0.shape == distortion.shape
        }
        return [
            "preset": preset.map { Double($0 + 1) } ?? 0,
            "type": index(DistortionNode.Shape.allCases.firstIndex(of: distortion.shape)), "drive": distortion.drive,
            "tone": distortion.tone, "mix": distortion.wetDryMix, "level": distortion.level, "bits": distortion.bits,
            "downsample": distortion.downsample, "carrier": distortion.carrier,
            "oversampling": log2(Double(distortion.oversampling)),
        ]
    case let varispeed as VarispeedNode:
        // The rate runs as rate × 2^(cents/1200): 1 with both defaults.
        return ["rate": varispeed.rate, "cents": varispeed.cents]
    case let timePitch as TimePitchNode:
        return ["rate": timePitch.rate, "pitch": timePitch.pitch]
    default:
        return [:]
    }
}

@Suite("Effect defaults: a spec that leaves a parameter out runs the default its table (and `fx list`) gives")
struct EffectDefaultsTests {
    @Test("every effect, every parameter: the node made from an empty spec runs the table's default")
    func emptySpecsRunTheTables() throws {
        for effect in EffectSpec.catalog {
            let nodes = try EffectSpec.engineNodes([EffectSpec(name: effect.name)])
            let node = try #require(nodes.first, "\(effect.name): no node")
            let values = running(node, effect: effect.name)
            for parameter in effect.parameters {
                let value = try #require(
                    values[parameter.identifier], "\(effect.name): \(parameter.identifier) not read")
                #expect(
                    abs(value - parameter.defaultValue) <= 1e-6 * max(1, abs(parameter.defaultValue)),
                    "\(effect.name) \(parameter.identifier): runs \(value), the table says \(parameter.defaultValue)")
            }
        }
    }

    @Test("eq and filter: no bw and no q is one octave, the table's q; a q given is that Q")
    func bandwidthDefault() throws {
        let q = try #require(
            EffectSpec.catalog.first { $0.name == "filter" }?.parameters.first { $0.identifier == "q" })
        #expect(abs(q.defaultValue - 2.squareRoot()) < 1e-9, "\(q.defaultValue)")
        let node = try #require(try EffectChain.makeNodes([EffectSpec(name: "filter", values: ["q": 0.707])]).first)
        let filter = try #require(node as? FilterNode)
        #expect(abs(FilterBand.q(forBandwidth: filter.band.bandwidth) - 0.707) < 1e-6)
    }
}
