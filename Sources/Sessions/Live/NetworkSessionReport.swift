import FoundationEssentials
import MIDIIO

/// What each network MIDI session of a live run had left in effect when it ended, just before
/// its notes were released: notes sounding, programs, controllers, RPN/NRPN values, pitch wheels,
/// pressures and the SysEx count, with its lost and repaired packets, as `pianola live
/// --rtpmidi-state` writes it. A session that lost packets and was repaired from the recovery
/// journal ends where the sender's stream did.
public struct NetworkSessionReport: Sendable, Codable, Hashable {
    /// An RPN's or NRPN's value: its last Data Entry and the increments since.
    public struct Parameter: Sendable, Codable, Hashable {
        /// "rpn" or "nrpn".
        public var kind: String
        /// The parameter number, 0…16383 (MSB × 128 + LSB).
        public var number: Int
        /// The last Data Entry MSB and LSB (controllers 6 and 38), nil when none came.
        public var msb, lsb: Int?
        /// Data Increments less Decrements since the last Data Entry.
        public var increments: Int?
    }

    /// A parameter, as the selection names it.
    public struct ParameterID: Sendable, Codable, Hashable {
        /// "rpn" or "nrpn".
        public var kind: String
        /// The parameter number, 0…16383.
        public var number: Int
    }

    /// One MIDI channel's state (only channels with something in effect are listed).
    public struct Channel: Sendable, Codable, Hashable {
        /// The channel, 1…16.
        public var channel: Int
        /// The notes sounding, lowest first.
        public var notes: [Int]
        /// The last program, nil before any.
        public var program: Int?
        /// Each controller's last value, by controller number.
        public var controllers: [String: Int]
        /// The last pitch wheel (0…16383, 8192 the centre) and channel pressure, nil before any.
        public var pitchWheel, channelPressure: Int?
        /// The RPN and NRPN values set.
        public var parameters: [Parameter]
        /// The parameter Data Entry goes to, nil when none is selected (or only an MSB came).
        public var selectedParameter: ParameterID?
    }

    /// One session.
    public struct Session: Sendable, Codable, Hashable {
        /// The peer's session name and control address.
        public var name, address: String
        /// The peer's SSRC.
        public var ssrc: UInt32
        /// Packets missing from its sequence, and gaps repaired from the recovery journal.
        public var lostPackets, repairedGaps: Int
        /// The SysEx commands it delivered (repairs included), modulo 256.
        public var sysExCount: Int
        /// The channels with something in effect.
        public var channels: [Channel]
    }

    /// The sessions that ended, by SSRC.
    public var sessions: [Session]

    /// The report of `listener`'s sessions that ended (after `stop()`, all of them).
    public init(listener: RTPMIDIListener) {
        sessions = listener.sessions.compactMap { session in
            guard let state = listener.stateAtEnd(ofSession: session.ssrc) else { return nil }
            return Session(
                name: session.name, address: session.address, ssrc: session.ssrc, lostPackets: session.lostPackets,
                repairedGaps: session.repairedGaps, sysExCount: Int(state.sysExCount),
                channels: Self.channels(of: state))
        }
    }

    static func channels(of state: MIDIChannelStates) -> [Channel] {
        (0..<UInt8(16)).compactMap { number in
            var controllers: [String: Int] = [:]
            for controller in 0..<UInt8(128) {
                if let value = state.controller(controller, onChannel: number) {
                    controllers[String(controller)] = Int(value)
                }
            }
            let channel = Channel(
                channel: Int(number) + 1, notes: state.soundingNotes(onChannel: number).map(Int.init),
                program: state.program(onChannel: number).map(Int.init), controllers: controllers,
                pitchWheel: state.pitchWheel(onChannel: number).map(Int.init),
                channelPressure: state.channelPressure(onChannel: number).map(Int.init),
                parameters: state.parameters(onChannel: number).map { log in
                    Parameter(
                        kind: log.parameter.isNonRegistered ? "nrpn" : "rpn", number: Int(log.parameter.number),
                        msb: log.entryMSB.map(Int.init), lsb: log.entryLSB.map(Int.init), increments: log.increments)
                },
                selectedParameter: state.selectedParameter(onChannel: number).map {
                    ParameterID(kind: $0.isNonRegistered ? "nrpn" : "rpn", number: Int($0.number))
                })
            let isEmpty =
                channel.notes.isEmpty && channel.program == nil && controllers.isEmpty && channel.pitchWheel == nil
                && channel.channelPressure == nil && channel.parameters.isEmpty && channel.selectedParameter == nil
            return isEmpty ? nil : channel
        }
    }

    /// Writes the report as JSON (through a temporary name and a rename).
    public func write(to path: String) throws(SessionError) { try TextFile.writeJSON(self, to: path) }
}
