import MIDICore

/// One RTP-MIDI packet (RFC 6295): the RTP header, the MIDI command section, and the recovery
/// journal left unparsed.
public struct RTPMIDIPacket: Equatable, Sendable {
    /// One piece of the command list: its delta time (in the session's 100 µs ticks, cumulative
    /// from the packet's timestamp) and the bytes of a complete MIDI message or of a SysEx segment.
    public struct Command: Equatable, Sendable {
        /// The delta time in 100 µs ticks, cumulative from the packet's timestamp (0 for the first command
        /// unless the packet's Z flag gave it one).
        public var delta: UInt32
        /// A whole MIDI message with its status byte (running status filled in), one System Real-time
        /// byte, or a SysEx piece from its `F0` or `F7` through its end byte (`F7`, `F0` or `F4`).
        public var bytes: [UInt8]

        /// Makes a command from its cumulative delta time and its bytes.
        public init(delta: UInt32, bytes: [UInt8]) {
            self.delta = delta
            self.bytes = bytes
        }
    }

    /// The RTP sequence number, one more with each packet the sender sends (wrapping at 65 535): how
    /// duplicates, late packets and gaps are found.
    public var sequence: UInt16
    /// The RTP timestamp in the sender's clock (100 µs ticks in Apple's sessions). Messages are
    /// stamped on arrival, not by it.
    public var timestamp: UInt32
    /// The sender's synchronization source: the SSRC it gave in its invitation, which names its session.
    public var ssrc: UInt32
    /// The J flag: a recovery journal follows the command list.
    public var hasJournal: Bool
    /// The command list in order (empty for a packet that carries only a journal). System Real-time
    /// bytes found inside a SysEx come before that SysEx's command.
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

    /// A packet's bytes (for tests and a sender): no journal, the commands' cumulative delta times
    /// as differences (the first one behind the Z flag when it is not 0), full status bytes.
    ///
    /// Throws when the packet cannot hold the commands: a delta time that goes back or moves by
    /// 2^28 ticks or more (4 octets at most), or a command list over 4095 bytes (the longest a
    /// packet's 12-bit length can give).
    public static func serialize(
        sequence: UInt16, timestamp: UInt32, ssrc: UInt32, commands: [Command]
    ) throws(RTPMIDIPacketError) -> [UInt8] {
        var list: [UInt8] = []
        var previous: UInt32 = 0
        let firstHasDelta = (commands.first?.delta ?? 0) != 0
        for (index, command) in commands.enumerated() {
            if index > 0 || firstHasDelta {
                guard command.delta >= previous, command.delta - previous < 1 << 28 else {
                    throw .cannotSerialize(
                        "delta time \(command.delta) after \(previous): deltas only grow, by less than 2^28 ticks")
                }
                let delta = command.delta - previous
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
        guard list.count <= 0x0FFF else {
            throw .cannotSerialize("a command list of \(list.count) bytes (a packet holds at most 4095)")
        }
        var out: [UInt8] = [0x80, 0x61, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence)]
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: timestamp >> $0) }
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) }
        let zFlag: UInt8 = firstHasDelta ? 0x20 : 0
        if list.count < 16 {
            out.append(zFlag | UInt8(list.count))
        } else {
            out += [0x80 | zFlag | UInt8(list.count >> 8 & 0x0F), UInt8(truncatingIfNeeded: list.count)]
        }
        return out + list
    }
}
