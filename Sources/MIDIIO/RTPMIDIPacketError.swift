/// Why a network MIDI packet was refused. Every malformed packet ends here: parsing never traps.
public enum RTPMIDIPacketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The packet or session command ends before a field it must hold: `needed` bytes at least, `got`
    /// in it.
    case tooShort(needed: Int, got: Int)
    /// A session command (`FF FF …`) with a name other than `IN`, `OK`, `NO`, `BY`, `CK`, `RS` or `RL`;
    /// the two-letter name, or `?` when it is not printable ASCII.
    case unknownCommand(String)
    /// An `IN`, `OK`, `NO` or `BY` command with a protocol version other than 2 (the version given).
    case unsupportedVersion(UInt32)
    /// Not RTP-MIDI at all: an RTP version other than 2, a payload type other than 97 (0x61), or a
    /// session command without the `FF FF` signature; the reason says which.
    case notRTPMIDI(String)
    /// The MIDI command list breaks RFC 6295's rules (a length past the packet, a delta time cut short
    /// or longer than 4 octets, a data byte without a status, an undefined or cut-short status, SysEx
    /// without an end byte or with a status inside), or a clock sync count above 2; the reason says
    /// which.
    case malformedCommandList(String)
    /// `RTPMIDIPacket.serialize` was given commands no packet can hold; the reason says why.
    case cannotSerialize(String)
    /// The recovery journal breaks RFC 6295's layout (a LENGTH past its end, a chapter cut short,
    /// more channel journals than it holds); the reason says which.
    case malformedJournal(String)

    public var description: String {
        switch self {
        case .tooShort(let needed, let got): return "packet too short (\(got) bytes, needs \(needed))"
        case .unknownCommand(let command): return "unknown session command '\(command)'"
        case .unsupportedVersion(let version): return "session protocol version \(version) (only 2 is known)"
        case .notRTPMIDI(let reason): return "not an RTP-MIDI packet: \(reason)"
        case .malformedCommandList(let reason): return "malformed MIDI command list: \(reason)"
        case .cannotSerialize(let reason): return "cannot make an RTP-MIDI packet: \(reason)"
        case .malformedJournal(let reason): return "malformed recovery journal: \(reason)"
        }
    }
}
