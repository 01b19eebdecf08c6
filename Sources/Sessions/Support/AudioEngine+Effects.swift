import AudioGraph
import Effects

extension AudioEngine {
    /// Attaches the nodes of an effect chain and connects `source` → effects → the main mixer.
    public func connect(_ source: AudioNode, throughEffects specs: [EffectSpec]) throws(SessionError) {
        do {
            var previous = source
            for node in try EffectChain.makeNodes(specs) {
                try attach(node)
                try connect(previous, to: node)
                previous = node
            }
            try connect(previous, to: mainMixerNode)
        } catch { throw SessionError(error) }
    }
}
