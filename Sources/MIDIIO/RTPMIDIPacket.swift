import MIDICore

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

/// An AppleMIDI session command (Apple's "MIDI Network Driver Protocol"): the packets that start
/// with `FF FF` on either port of a session.
public enum AppleMIDICommand: Equatable, Sendable {
    /// `IN`: an invitation to join a session.
    case invitation(token: UInt32, ssrc: UInt32, name: String)
    /// `OK`: an invitation accepted.
    case accept(token: UInt32, ssrc: UInt32, name: String)
    /// `NO`: an invitation refused.
    case reject(token: UInt32, ssrc: UInt32)
    /// `BY`: the session ends.
    case end(token: UInt32, ssrc: UInt32)
    /// `CK`: clock synchronization; `count` 0, 1 or 2 says how many timestamps (100 µs ticks) are set.
    case clockSync(ssrc: UInt32, count: UInt8, timestamps: [UInt64])
    /// `RS`: receiver feedback, the last sequence number received.
    case receiverFeedback(ssrc: UInt32, sequence: UInt32)
    /// `RL`: a bitrate limit (rare; accepted and ignored).
    case bitrateLimit(ssrc: UInt32, bitsPerSecond: UInt32)

    /// Whether `bytes` is a session command (starts with `FF FF`) rather than an RTP packet.
    public static func isCommand(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count >= 2 && bytes.first == 0xFF && bytes.dropFirst().first == 0xFF
    }

    /// Parses a session command.
    public init(parsing bytes: [UInt8]) throws(RTPMIDIPacketError) {
        guard bytes.count >= 4 else { throw .tooShort(needed: 4, got: bytes.count) }
        guard bytes[0] == 0xFF, bytes[1] == 0xFF else { throw .notRTPMIDI("no FF FF signature") }
        let name = String(decoding: bytes[2..<4], as: UTF8.self)
        var reader = ByteReader(bytes, from: 4)
        switch name {
        case "IN", "OK", "NO", "BY":
            let version = try reader.u32()
            guard version == 2 else { throw .unsupportedVersion(version) }
            let token = try reader.u32()
            let ssrc = try reader.u32()
            let sessionName = reader.nulTerminatedString()
            switch name {
            case "IN": self = .invitation(token: token, ssrc: ssrc, name: sessionName)
            case "OK": self = .accept(token: token, ssrc: ssrc, name: sessionName)
            case "NO": self = .reject(token: token, ssrc: ssrc)
            default: self = .end(token: token, ssrc: ssrc)
            }
        case "CK":
            let ssrc = try reader.u32()
            let count = try reader.u8()
            guard count <= 2 else { throw .malformedCommandList("clock sync count \(count)") }
            try reader.skip(3)
            let timestamps = [try reader.u64(), try reader.u64(), try reader.u64()]
            self = .clockSync(ssrc: ssrc, count: count, timestamps: timestamps)
        case "RS":
            self = .receiverFeedback(ssrc: try reader.u32(), sequence: try reader.u32())
        case "RL":
            self = .bitrateLimit(ssrc: try reader.u32(), bitsPerSecond: try reader.u32())
        default:
            throw .unknownCommand(name.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 32 } ? name : "?")
        }
    }

    /// The command's bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = [0xFF, 0xFF]
        func append32(_ value: UInt32) { out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func append64(_ value: UInt64) {
            out += [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        }
        switch self {
        case .invitation(let token, let ssrc, let name), .accept(let token, let ssrc, let name):
            if case .invitation = self { out += Array("IN".utf8) } else { out += Array("OK".utf8) }
            append32(2)
            append32(token)
            append32(ssrc)
            out += Array(name.utf8) + [0]
        case .reject(let token, let ssrc), .end(let token, let ssrc):
            if case .reject = self { out += Array("NO".utf8) } else { out += Array("BY".utf8) }
            append32(2)
            append32(token)
            append32(ssrc)
        case .clockSync(let ssrc, let count, let timestamps):
            out += Array("CK".utf8)
            append32(ssrc)
            out += [count, 0, 0, 0]
            for index in 0..<3 { append64(index < timestamps.count ? timestamps[index] : 0) }
        case .receiverFeedback(let ssrc, let sequence):
            out += Array("RS".utf8)
            append32(ssrc)
            append32(sequence)
        case .bitrateLimit(let ssrc, let limit):
            out += Array("RL".utf8)
            append32(ssrc)
            append32(limit)
        }
        return out
    }
}

/// One RTP-MIDI packet (RFC 6295): the RTP header, the MIDI command section, and the recovery
/// journal left unparsed.
public struct RTPMIDIPacket: Equatable, Sendable {
    /// One piece of the command list: its delta time (in the session's 100 µs ticks, cumulative
    /// from the packet's timestamp) and the bytes of a complete MIDI message or of a SysEx segment.
    public struct Command: Equatable, Sendable {
        public var delta: UInt32
        public var bytes: [UInt8]
    }

    public var sequence: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// The J flag: a recovery journal follows the command list.
    public var hasJournal: Bool
    public var commands: [Command]
    /// The journal's bytes (skipped by the command list's length, never read as MIDI).
    public var journal: [UInt8]

    /// Parses a packet. The command list is split by RFC 6295's rules: delta times before every
    /// command but the first (unless Z), running status reset at the start of the list, System
    /// Real-time bytes anywhere (even inside SysEx), SysEx as a whole (`F0 … F7`) or in segments
    /// (`F0 … F0`, `F7 … F0`, `F7 … F7`, cancelled by `F7 F4`).
    public init(parsing bytes: [UInt8]) throws(RTPMIDIPacketError) {
        guard bytes.count >= 13 else { throw .tooShort(needed: 13, got: bytes.count) }
        guard bytes[0] >> 6 == 2 else { throw .notRTPMIDI("RTP version \(bytes[0] >> 6)") }
        guard bytes[1] & 0x7F == 0x61 else { throw .notRTPMIDI("payload type \(bytes[1] & 0x7F)") }
        let csrcCount = Int(bytes[0] & 0x0F)
        var reader = ByteReader(bytes, from: 2)
        sequence = try reader.u16()
        timestamp = try reader.u32()
        ssrc = try reader.u32()
        try reader.skip(4 * csrcCount)
        if bytes[0] & 0x10 != 0 {  // an RTP header extension: 16-bit profile, 16-bit length in words
            try reader.skip(2)
            try reader.skip(4 * Int(try reader.u16()))
        }
        let header = try reader.u8()
        let long = header & 0x80 != 0
        hasJournal = header & 0x40 != 0
        let firstHasDelta = header & 0x20 != 0
        var length = Int(header & 0x0F)
        if long { length = length << 8 | Int(try reader.u8()) }
        let listStart = reader.position
        guard listStart + length <= bytes.count else {
            throw .malformedCommandList("length \(length) runs past the packet (\(bytes.count - listStart) bytes left)")
        }
        commands = try Self.splitCommands(bytes[listStart..<(listStart + length)], firstHasDelta: firstHasDelta)
        journal = hasJournal ? Array(bytes[(listStart + length)...]) : []
    }

    private static func splitCommands(
        _ list: ArraySlice<UInt8>, firstHasDelta: Bool
    ) throws(RTPMIDIPacketError)
        -> [Command]
    {
        var commands: [Command] = []
        var index = list.startIndex
        var delta: UInt32 = 0
        var runningStatus: UInt8 = 0
        var first = true
        while index < list.endIndex {
            if !first || firstHasDelta {
                // A delta time: 1-4 octets, 7 bits each, most significant first.
                var value: UInt32 = 0
                var octets = 0
                while true {
                    guard index < list.endIndex else {
                        // A trailing delta with no command after it is legal padding.
                        if octets > 0 { return commands }
                        throw .malformedCommandList("delta time cut short")
                    }
                    let byte = list[index]
                    index += 1
                    octets += 1
                    value = value << 7 | UInt32(byte & 0x7F)
                    if byte & 0x80 == 0 { break }
                    guard octets < 4 else { throw .malformedCommandList("delta time longer than 4 octets") }
                }
                delta &+= value
                if index == list.endIndex { return commands }
            }
            first = false
            let status = list[index]
            if status >= 0xF8 {  // System Real-time: one byte, running status kept
                commands.append(Command(delta: delta, bytes: [status]))
                index += 1
                continue
            }
            if status == 0xF0 || status == 0xF7 {
                // SysEx, whole or a segment: up to and including the first F7, F0 or F4.
                var payload: [UInt8] = [status]
                index += 1
                var ended = false
                while index < list.endIndex {
                    let byte = list[index]
                    index += 1
                    if byte >= 0xF8 {
                        commands.append(Command(delta: delta, bytes: [byte]))
                        continue
                    }
                    payload.append(byte)
                    if byte == 0xF7 || byte == 0xF0 || byte == 0xF4 {
                        ended = true
                        break
                    }
                    if byte & 0x80 != 0 { throw .malformedCommandList("status \(hex(byte)) inside SysEx") }
                }
                guard ended else { throw .malformedCommandList("SysEx without an end byte") }
                commands.append(Command(delta: delta, bytes: payload))
                runningStatus = 0
                continue
            }
            var message: [UInt8]
            if status & 0x80 != 0 {
                message = [status]
                index += 1
                if status < 0xF0 { runningStatus = status } else { runningStatus = 0 }
            } else {
                guard runningStatus != 0 else { throw .malformedCommandList("data byte without a status") }
                message = [runningStatus]
            }
            guard let length = MIDIMessage.dataLength(ofStatus: message[0]) else {
                throw .malformedCommandList("undefined status \(hex(message[0]))")
            }
            for _ in 0..<length {
                guard index < list.endIndex, list[index] & 0x80 == 0 else {
                    throw .malformedCommandList("status \(hex(message[0])) cut short")
                }
                message.append(list[index])
                index += 1
            }
            commands.append(Command(delta: delta, bytes: message))
        }
        return commands
    }

    /// A packet's bytes (for tests and a sender): no journal, delta times as given.
    public static func serialize(sequence: UInt16, timestamp: UInt32, ssrc: UInt32, commands: [Command]) -> [UInt8] {
        var list: [UInt8] = []
        var previous: UInt32 = 0
        for (index, command) in commands.enumerated() {
            if index > 0 {
                let delta = command.delta &- previous
                var groups: [UInt8] = [UInt8(delta & 0x7F)]
                var rest = delta >> 7
                while rest > 0 {
                    groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                    rest >>= 7
                }
                list += groups
            }
            previous = command.delta
            list += command.bytes
        }
        var out: [UInt8] = [0x80, 0x61, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence)]
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: timestamp >> $0) }
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) }
        if list.count < 16 {
            out.append(UInt8(list.count))
        } else {
            out += [0x80 | UInt8(list.count >> 8 & 0x0F), UInt8(truncatingIfNeeded: list.count)]
        }
        return out + list
    }
}

/// Big-endian reads with bounds checks that throw instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], from position: Int) {
        self.bytes = bytes
        self.position = position
    }

    mutating func u8() throws(RTPMIDIPacketError) -> UInt8 {
        guard position < bytes.count else { throw .tooShort(needed: position + 1, got: bytes.count) }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws(RTPMIDIPacketError) -> UInt16 {
        UInt16(try u8()) << 8 | UInt16(try u8())
    }

    mutating func u32() throws(RTPMIDIPacketError) -> UInt32 {
        UInt32(try u16()) << 16 | UInt32(try u16())
    }

    mutating func u64() throws(RTPMIDIPacketError) -> UInt64 {
        UInt64(try u32()) << 32 | UInt64(try u32())
    }

    mutating func skip(_ count: Int) throws(RTPMIDIPacketError) {
        guard count >= 0, position + count <= bytes.count else {
            throw .tooShort(needed: position + max(0, count), got: bytes.count)
        }
        position += count
    }

    /// The rest up to a NUL (or the end), as UTF-8 (invalid bytes replaced).
    mutating func nulTerminatedString() -> String {
        let rest = bytes[min(position, bytes.count)...]
        let end = rest.firstIndex(of: 0) ?? rest.endIndex
        position = min(bytes.count, end + 1)
        return String(decoding: rest[..<end], as: UTF8.self)
    }
}

/// A byte as two uppercase hex digits.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
}
