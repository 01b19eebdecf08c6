/// Why a graph operation or a render was refused. Each case says which node or bus.
public enum AudioGraphError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The node was never attached to this engine (or was detached).
    case nodeNotAttached(String)
    /// The connection would make the graph loop back on itself.
    case cycle(String)
    /// The bus does not exist on the node.
    case invalidBus(node: String, bus: Int)
    /// The node cannot take or produce this format (channel count, sample rate).
    case formatMismatch(node: String, format: AudioFormat, reason: String)
    /// Nothing is connected to the engine's output, so there is nothing to render.
    case outputNotConnected
    /// Rendering was asked for before `enableManualRenderingMode` or `start`.
    case notPrepared
    /// More frames than the engine was prepared for in one call.
    case frameCountTooLarge(requested: Int, maximum: Int)
    /// The buffer given to render into holds fewer frames than asked for.
    case bufferTooSmall(requested: Int, capacity: Int)
    /// The node is attached to another engine (detach it there first).
    case nodeAttachedElsewhere(String)
    /// `start()` was called with no output device set.
    case noOutputDevice
    /// A channel map names channels the output does not have, the same channel twice, or not one
    /// output channel per source channel.
    case invalidChannelMap(node: String, reason: String)
    /// A node would feed a rate-converting node (a varispeed, a time-pitch unit) and also another
    /// path, which renders at another pace.
    case mixedRates(node: String, reason: String)
    /// The change would prepare a node again (a new format, more frames a quantum) while a
    /// device runs, and the device did not render the plan that leaves the node out while it
    /// is prepared (it stalled for 2 s): stop the engine, change the graph, start it again.
    case requiresStop(node: String, reason: String)

    public var description: String {
        switch self {
        case .nodeNotAttached(let node): return "\(node) is not attached to the engine"
        case .cycle(let path): return "connecting would create a cycle: \(path)"
        case .invalidBus(let node, let bus): return "\(node) has no bus \(bus)"
        case .formatMismatch(let node, let format, let reason): return "\(node) cannot use \(format): \(reason)"
        case .outputNotConnected: return "nothing is connected to the engine's output"
        case .notPrepared: return "the engine is not prepared: enable manual rendering or start it first"
        case .frameCountTooLarge(let requested, let maximum):
            return "\(requested) frames requested, the engine renders at most \(maximum) per call"
        case .noOutputDevice: return "the engine has no output device to start (connect one, e.g. an ALSA device)"
        case .bufferTooSmall(let requested, let capacity):
            return "\(requested) frames requested, the buffer holds \(capacity) (make it at least that large)"
        case .invalidChannelMap(let node, let reason): return "\(node)'s channel map: \(reason)"
        case .mixedRates(let node, let reason): return "\(node) cannot feed both: \(reason)"
        case .requiresStop(let node, let reason):
            return "\(node) must be prepared again (\(reason)): stop the engine to make this change"
        case .nodeAttachedElsewhere(let node):
            return "\(node) is attached to another engine (detach it there first)"
        }
    }
}
