/// Why a network MIDI packet was refused. Every malformed packet ends here: parsing never traps.
public enum RTPMIDIPacketError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(needed: Int, got: Int)
    case unknownCommand(String)
    case unsupportedVersion(UInt32)
    case notRTPMIDI(String)
    case malformedCommandList(String)

    public var description: String {
        switch self {
        case .tooShort(let needed, let got): return "packet too short (\(got) bytes, needs \(needed))"
        case .unknownCommand(let command): return "unknown session command '\(command)'"
        case .unsupportedVersion(let version): return "session protocol version \(version) (only 2 is known)"
        case .notRTPMIDI(let reason): return "not an RTP-MIDI packet: \(reason)"
        case .malformedCommandList(let reason): return "malformed MIDI command list: \(reason)"
        }
    }
}
