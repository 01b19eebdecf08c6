import JACKIO
import MIDIIO

/// How a live session sounds now, for a status line or a UI.
public struct LiveStatus: Sendable, Hashable {
    /// Synthesizer voices sounding at the end of the last rendered quantum.
    public var voiceCount: Int
    /// The highest sample level since the previous status (linear, 0 for silence).
    public var peak: Float
    /// The fixed latency from a message's arrival to its sound (output buffer plus delay), in milliseconds.
    public var latencyMilliseconds: Double
    /// Output underruns (xruns) the device recovered from so far.
    public var underruns: Int
    /// Events played so far, and those that arrived too late to keep the fixed latency.
    public var deliveredCount: Int
    /// Events that arrived too late for the fixed latency (or before the output started), played at the
    /// start of the next quantum.
    public var lateCount: Int
}

extension LiveSession {
    /// A MIDI source: a sequencer port or a network session.
    public struct Source: Sendable, Hashable {
        /// A sequencer port's `CLIENT-NAME:PORT-NAME (CLIENT:PORT)`, or a network session's name followed by
        /// " (network)".
        public var name: String
        /// `CLIENT:PORT`, or a network peer's `HOST:PORT`.
        public var address: String
        /// Whether its messages arrive now: the port is subscribed, or the network session is open and not ended.
        public var isConnected: Bool
        /// Messages received from it (for a network session, with the note-offs and pedal releases made for it).
        public var messageCount: Int
        /// Arrival time of its last message (`MIDITimestamp`), 0 if none yet.
        public var lastArrival: UInt64
        /// Whether it is a network MIDI (RTP-MIDI) session rather than a sequencer port.
        public var isNetwork: Bool
        /// Why it could not be connected (a sequencer port whose subscription failed), or nil.
        public var failure: String?

        init(_ source: ALSASequencerInput.Source) {
            name = source.name
            address = source.address
            isConnected = source.isConnected
            messageCount = source.messageCount
            lastArrival = source.lastArrival
            isNetwork = false
            failure = source.failure
        }

        init(_ jack: JACKOutput) {
            name = "JACK MIDI"
            address = jack.midiPortName ?? ""
            isConnected = true
            messageCount = jack.midiEventCount
            lastArrival = jack.lastMIDIArrival
            isNetwork = false
            failure = nil
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

    /// Something the user should know that is not an error.
    public enum Note: Sendable, Hashable, CustomStringConvertible {
        /// There is no ALSA sequencer (the reason): network MIDI serves alone.
        case networkOnly(reason: String)
        /// Real-time scheduling is not permitted: the audio thread runs at normal priority.
        case realTimeRefused
        /// The listening network session is not advertised over mDNS (avahi missing, not
        /// running, or the session on loopback only).
        case notAdvertised(reason: String)

        public var description: String {
            switch self {
            case .networkOnly(let reason): return "\(reason); network MIDI only"
            case .realTimeRefused:
                return
                    "real-time scheduling (SCHED_FIFO) is not permitted here; the audio thread runs at normal priority"
            case .notAdvertised(let reason): return "network MIDI: not advertised over mDNS: \(reason)"
            }
        }
    }

    /// Something that happened to the session's inputs.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// A sequencer source connected, disconnected or could not be connected ("cannot connect:
        /// NAME (CLIENT:PORT): reason").
        case sequencer(String)
        /// A network session opened, ended, timed out or was refused ("connected: NAME (HOST:PORT)").
        case network(String)
        /// A thru destination went away or came back ("disconnected: NAME (CLIENT:PORT)").
        case thru(String)

        public var description: String {
            switch self {
            case .sequencer(let text): return "MIDI input: \(text)"
            case .network(let text): return "network MIDI: \(text)"
            case .thru(let text): return "MIDI thru: \(text)"
            }
        }
    }
}
