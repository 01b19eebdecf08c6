import AudioGraph
import Effects
import Sequencer

extension AudioEngine {
    /// Attaches the nodes of an effect chain and connects `source` → effects → `mixer` (the main
    /// mixer when nil). Returns the effect nodes, in order.
    @discardableResult
    public func connect(
        _ source: AudioNode, throughEffects specs: [EffectSpec], to mixer: MixerNode? = nil
    ) throws(SessionError) -> [AudioNode] {
        do {
            var previous = source
            let nodes = try EffectChain.makeNodes(specs)
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

extension MusicSequence {
    /// The tempo a song starts at, in beats per minute: what a `delay` given a note value follows.
    /// Nil for SMPTE-timed files, which have no tempo.
    public var startingTempo: Double? {
        guard case .ticksPerQuarterNote = tempoMap.division else { return nil }
        return tempoMap.tempoChanges.first?.beatsPerMinute
    }
}

/// Times the delays of `nodes` made from `specs` whose note values follow the song's tempo.
func retimeDelays(_ nodes: [AudioNode], specs: [EffectSpec], songTempo: Double?) {
    let delays = nodes.compactMap { $0 as? DelayNode }
    for (spec, delay) in zip(specs.filter { $0.name == "delay" }, delays) where spec.followsSongTempo {
        delay.delayTime = spec.delaySeconds(songTempo: songTempo)
    }
}
