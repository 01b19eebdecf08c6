/// Why MIDI I/O (the ALSA sequencer, network sessions) could not be set up; each case says what
/// and where.
public enum MIDIIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The ALSA sequencer cannot be opened (no `/dev/snd/seq`, no permission).
    case sequencerUnavailable(reason: String)
    /// A source given to `ALSASequencerInput.connect(_:waitingForIt:)`, by name or address, that
    /// matches no port.
    case unknownSource(String, reason: String)
    /// The subscription to a source failed.
    case cannotConnect(String, reason: String)
    /// A MIDI destination given to `ALSASequencerOutput.connect(_:subscribing:)` that matches no
    /// port; the ports whose names come close (every destination when none does).
    case unknownDestination(String, nearMatches: [String])
    /// The subscription of a destination to our output port failed.
    case cannotConnectDestination(String, reason: String)
    /// The network MIDI ports (control and data, consecutive) could not be opened.
    case networkUnavailable(address: String, reason: String)
    /// A network session to open names a host that does not resolve (or a bad port).
    case unknownHost(String, reason: String)
    /// The session cannot be advertised over mDNS (avahi missing or not running).
    case advertisementUnavailable(reason: String)

    public var description: String {
        switch self {
        case .sequencerUnavailable(let reason):
            return "ALSA sequencer: cannot open /dev/snd/seq: \(reason)"
        case .unknownSource(let source, let reason):
            return "MIDI source '\(source)': \(reason) \(Self.sourcesHint)"
        case .cannotConnect(let source, let reason):
            return "MIDI source '\(source)': cannot connect: \(reason)"
        case .unknownDestination(let destination, let near):
            let list = near.isEmpty ? "no MIDI destination exists" : "near: \(near.prefix(5).joined(separator: ", "))"
            return "MIDI destination '\(destination)': no such sequencer port; \(list) \(Self.destinationsHint)"
        case .cannotConnectDestination(let destination, let reason):
            return "MIDI destination '\(destination)': cannot connect: \(reason)"
        case .networkUnavailable(let address, let reason):
            return "network MIDI: cannot listen on \(address) and the port after it: \(reason)"
        case .unknownHost(let host, let reason):
            return "network MIDI: cannot open a session to '\(host)': \(reason)"
        case .advertisementUnavailable(let reason):
            return "network MIDI: not advertised over mDNS: \(reason)"
        }
    }

    /// How an ``unknownSource(_:reason:)`` description ends: the call that lists the sources, for
    /// a caller to put in its own words (the `pianola` command names `pianola devices`).
    public static let sourcesHint = "(ALSASequencerInput.ports() lists them)"
    /// How an ``unknownDestination(_:nearMatches:)`` description ends: the call that lists the
    /// destinations, for a caller to put in its own words.
    public static let destinationsHint = "(ALSASequencerOutput.destinations() lists them)"
}
