import MIDIIO

/// How a live session sounds now, for a status line or a UI.
public struct LiveStatus: Sendable, Hashable {
    public var voiceCount: Int
    /// The highest sample level since the previous status (linear, 0 for silence).
    public var peak: Float
    public var latencyMilliseconds: Double
    public var underruns: Int
    /// Events played so far, and those that arrived too late to keep the fixed latency.
    public var deliveredCount: Int
    public var lateCount: Int
}

extension LiveSession {
    /// A MIDI source: a sequencer port or a network session.
    public struct Source: Sendable, Hashable {
        public var name: String
        /// `CLIENT:PORT`, or a network peer's `HOST:PORT`.
        public var address: String
        public var isConnected: Bool
        public var messageCount: Int
        /// Arrival time of its last message (`MIDITimestamp`), 0 if none yet.
        public var lastArrival: UInt64
        public var isNetwork: Bool

        init(_ source: ALSASequencerInput.Source) {
            name = source.name
            address = source.address
            isConnected = source.isConnected
            messageCount = source.messageCount
            lastArrival = source.lastArrival
            isNetwork = false
        }

        init(_ session: RTPMIDIListener.Session) {
            name = "\(session.name) (network)"
            address = session.address
            isConnected = session.isConnected
            messageCount = session.messageCount
            lastArrival = session.lastArrival
            isNetwork = true
        }
    }

    /// Something that happened to the session's inputs.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// A network session opened, ended, timed out or was refused ("connected: NAME (HOST:PORT)").
        case network(String)

        public var description: String {
            switch self {
            case .network(let text): return "network MIDI: \(text)"
            }
        }
    }
}
