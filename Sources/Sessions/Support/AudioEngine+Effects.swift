import AudioGraph
import Effects
import RateAndPitch
import Sequencer

extension AudioEngine {
    /// Attaches the nodes of an effect chain and connects `source` → effects → `mixer` (the main
    /// mixer when nil). Returns the effect nodes, in order. A `varispeed` or `timepitch` becomes a
    /// `VarispeedNode` or `TimePitchNode`: everything before it renders at its pace, so a player
    /// driving `source` must run `EffectSpec.rateFactor(of:)` times as fast for the song to go at
    /// the rate asked (the sessions do).
    @discardableResult
    public func connect(
        _ source: AudioNode, throughEffects specs: [EffectSpec], to mixer: MixerNode? = nil
    ) throws(SessionError) -> [AudioNode] {
        do {
            var previous = source
            let nodes = try EffectSpec.engineNodes(specs)
            for node in nodes {
                try attach(node)
                try connect(previous, to: node)
                previous = node
            }
            try connect(previous, to: mixer ?? mainMixerNode)
            return nodes
        } catch { throw SessionError(error) }
    }
}

extension EffectSpec {
    /// The nodes of a chain for an engine: `EffectChain.makeNodes`'s, with each `varispeed` a
    /// `VarispeedNode` and each `timepitch` a `TimePitchNode` (rate domains, which only an engine
    /// runs). With `allowingRateChanges` false those are refused with `refusal`. Delays given a
    /// note value are timed when a song is known (`retimeDelays`).
    static func engineNodes(
        _ specs: [EffectSpec], allowingRateChanges: Bool = true,
        refusal: String = "changes the pace of what comes before it"
    ) throws(EffectSpecError) -> [AudioNode] {
        var nodes: [AudioNode] = []
        var run: [EffectSpec] = []
        for spec in specs {
            guard spec.changesRate else {
                run.append(spec)
                continue
            }
            guard allowingRateChanges else { throw EffectSpecError("\(spec.name): \(refusal)") }
            nodes += try EffectChain.makeNodes(run)
            run = []
            if spec.name == "varispeed" {
                let node = VarispeedNode()
                node.rate = spec.varispeedRate
                nodes.append(node)
            } else {
                let node = TimePitchNode()
                node.rate = spec.value(of: "rate")
                node.pitch = spec.value(of: "pitch")
                nodes.append(node)
            }
        }
        return nodes + (try EffectChain.makeNodes(run))
    }
}

extension MusicSequence {
    /// The tempo a song starts at, in beats per minute: what a `delay` given a note value follows.
    /// Nil for SMPTE-timed files, which have no tempo.
    public var startingTempo: Double? {
        guard case .ticksPerQuarterNote = tempoMap.division else { return nil }
        return tempoMap.tempoChanges.first?.beatsPerMinute
    }
}

/// Times the delays of `nodes` made from `specs` whose note values follow the song's tempo (as
/// the song sounds where the delay is: a varispeed or time-pitch before it changes the tempo).
func retimeDelays(_ nodes: [AudioNode], specs: [EffectSpec], songTempo: Double?) {
    let delays = nodes.compactMap { $0 as? DelayNode }
    var factor = 1.0
    var delaySpecs: [(spec: EffectSpec, factor: Double)] = []
    for spec in specs {
        if spec.name == "delay" { delaySpecs.append((spec, factor)) }
        factor *= spec.rateFactor
    }
    for (item, delay) in zip(delaySpecs, delays) where item.spec.followsSongTempo {
        delay.delayTime = item.spec.delaySeconds(songTempo: songTempo.map { $0 * item.factor })
    }
}
