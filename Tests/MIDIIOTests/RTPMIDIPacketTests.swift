import MIDICore
import Testing

@testable import MIDIIO

@Suite("RTP-MIDI packets")
struct RTPMIDIPacketTests {
    @Test("session commands round-trip; macOS's invitation parses")
    func sessionCommands() throws {
        let commands: [AppleMIDICommand] = [
            .invitation(token: 0x0507_2367, ssrc: 0x47D8_1096, name: "mbook-session"),
            .accept(token: 1, ssrc: 2, name: "Pianola ♪"), .reject(token: 3, ssrc: 4), .end(token: 5, ssrc: 6),
            .clockSync(ssrc: 7, count: 2, timestamps: [1, 2, 3]), .receiverFeedback(ssrc: 8, sequence: 0x1234_0000),
            .bitrateLimit(ssrc: 9, bitsPerSecond: 31_250),
        ]
        for command in commands { #expect(try AppleMIDICommand(parsing: command.bytes) == command) }
        // pymidi's capture of a macOS invitation (APPLEMIDI_INVITATION_PACKET).
        let macOS: [UInt8] =
            [
                0xFF, 0xFF, 0x49, 0x4E, 0, 0, 0, 2, 0x05, 0x07, 0x23, 0x67, 0x47, 0xD8, 0x10, 0x96,
            ] + Array("mbook-session".utf8) + [0]
        #expect(
            try AppleMIDICommand(parsing: macOS)
                == .invitation(token: 0x0507_2367, ssrc: 0x47D8_1096, name: "mbook-session"))
        #expect(throws: RTPMIDIPacketError.self) { try AppleMIDICommand(parsing: [0xFF, 0xFF, 0x49]) }
        #expect(throws: RTPMIDIPacketError.unknownCommand("ZZ")) {
            try AppleMIDICommand(parsing: [0xFF, 0xFF, 0x5A, 0x5A, 0, 0, 0, 0])
        }
    }

    @Test("macOS's packet: journal skipped by length, delta time, running status")
    func macOSPacket() throws {
        // pymidi's MULTI_MIDI_PACKET.
        let bytes: [UInt8] = [
            0x80, 0x61, 0x42, 0x9A, 0x51, 0xD2, 0xDC, 0x87, 0x47, 0xD8, 0x10, 0x96, 0x46, 0x90, 0x3E, 0x31, 0x0A,
            0x40, 0x3B, 0x21, 0x42, 0x7C, 0x00, 0x09, 0x08, 0x81, 0x67, 0x3C, 0x25, 0x0D, 0x50, 0xC8, 0x06, 0x08,
            0x80, 0x44, 0x0E,
        ]
        let packet = try RTPMIDIPacket(parsing: bytes)
        #expect(packet.sequence == 0x429A)
        #expect(packet.ssrc == 0x47D8_1096)
        #expect(packet.hasJournal)
        #expect(
            packet.commands == [
                .init(delta: 0, bytes: [0x90, 0x3E, 0x31]), .init(delta: 10, bytes: [0x90, 0x40, 0x3B]),
            ])
        #expect(packet.journal.first == 0x21)
    }

    @Test("Z flag, long length, multi-octet deltas, trailing delta, real-time inside SysEx, segments")
    func commandList() throws {
        func packet(_ list: [UInt8], flags: UInt8 = 0) throws -> [RTPMIDIPacket.Command] {
            var header: [UInt8] = [0x80, 0x61, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9]
            if list.count < 16 && flags & 0x80 == 0 {
                header.append(flags | UInt8(list.count))
            } else {
                header += [0x80 | flags | UInt8(list.count >> 8), UInt8(list.count & 0xFF)]
            }
            return try RTPMIDIPacket(parsing: header + list).commands
        }
        #expect(try packet([0x05, 0xC0, 0x07], flags: 0x20) == [.init(delta: 5, bytes: [0xC0, 0x07])])
        // A long (12-bit) length with a two-octet delta: 0x81 0x00 is 128.
        #expect(
            try packet([0xB0, 0x07, 0x64, 0x81, 0x00, 0xB0, 0x0A, 0x20], flags: 0x80)
                == [.init(delta: 0, bytes: [0xB0, 0x07, 0x64]), .init(delta: 128, bytes: [0xB0, 0x0A, 0x20])])
        let list = try packet([0x90, 0x3C, 0x40, 0x81, 0x00, 0x3E, 0x40, 0x05])
        #expect(list == [.init(delta: 0, bytes: [0x90, 0x3C, 0x40]), .init(delta: 128, bytes: [0x90, 0x3E, 0x40])])
        #expect(
            try packet([0xF0, 0x7E, 0xF8, 0x7F, 0xF7])
                == [.init(delta: 0, bytes: [0xF8]), .init(delta: 0, bytes: [0xF0, 0x7E, 0x7F, 0xF7])])
        #expect(try packet([0xF7, 0x01, 0xF0]) == [.init(delta: 0, bytes: [0xF7, 0x01, 0xF0])])
        #expect(try packet([0xF7, 0xF4]) == [.init(delta: 0, bytes: [0xF7, 0xF4])])
        // Running status ends at SysEx and System Common, not at Real-time.
        #expect(throws: RTPMIDIPacketError.self) { try packet([0xF0, 0x01, 0xF7, 0x00, 0x3C, 0x40]) }
        #expect(
            try packet([0x90, 0x3C, 0x40, 0x00, 0xF8, 0x00, 0x3E, 0x40]).map(\.bytes)
                == [[0x90, 0x3C, 0x40], [0xF8], [0x90, 0x3E, 0x40]])
    }

    @Test("malformed lists are errors, not traps")
    func malformed() {
        let header: [UInt8] = [0x80, 0x61, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9]
        let cases: [[UInt8]] = [
            header + [0x05, 0x90, 0x3C],  // LEN past the end
            header + [0x02, 0x3C, 0x40],  // data without status
            header + [0x25, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // a 5-octet delta
            header + [0x02, 0xF4, 0x00],  // undefined status
            header + [0x03, 0xF0, 0x01, 0x02],  // SysEx without an end
            header + [0x03, 0x90, 0x3C, 0x90],  // cut short by a status
            [0x40, 0x61] + header.dropFirst(2) + [0x00],  // RTP version 1
            [0x80, 0x60] + header.dropFirst(2) + [0x00],  // payload type 96
        ]
        for bytes in cases { #expect(throws: RTPMIDIPacketError.self) { try RTPMIDIPacket(parsing: bytes) } }
    }

    @Test("200 000 random and mutated packets never trap")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let valid: [UInt8] = [
            0x80, 0x61, 0x42, 0x9A, 0x51, 0xD2, 0xDC, 0x87, 0x47, 0xD8, 0x10, 0x96, 0x46, 0x90, 0x3E, 0x31, 0x0A,
            0x40, 0x3B, 0x21,
        ]
        var parsed = 0
        for round in 0..<200_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0..<48, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if round % 4 == 0 && bytes.count > 2 { bytes[0] = 0x80 | bytes[0] & 0x3F; bytes[1] = 0x61 }
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            if (try? RTPMIDIPacket(parsing: bytes)) != nil { parsed += 1 }
            _ = try? AppleMIDICommand(parsing: [0xFF, 0xFF] + bytes)
        }
        #expect(parsed > 0)
    }

    @Test("serialize then parse gives the commands back")
    func serialize() throws {
        let commands: [RTPMIDIPacket.Command] =
            [
                .init(delta: 0, bytes: [0x90, 0x3C, 0x40]), .init(delta: 300, bytes: [0xE0, 0x00, 0x40]),
                .init(delta: 300, bytes: [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]),
            ] + (0..<10).map { .init(delta: 301 + UInt32($0), bytes: [0xB0, UInt8($0), 0x10]) }
        let bytes = try RTPMIDIPacket.serialize(sequence: 7, timestamp: 9, ssrc: 11, commands: commands)
        let packet = try RTPMIDIPacket(parsing: bytes)
        #expect(packet.commands == commands)
        #expect(packet.sequence == 7 && packet.ssrc == 11 && !packet.hasJournal)
    }

    @Test("serialize keeps a first delta (Z flag) and refuses what no packet holds, instead of wrong bytes")
    func serializeLimits() throws {
        let late: [RTPMIDIPacket.Command] = [
            .init(delta: 25, bytes: [0x90, 0x3C, 0x40]), .init(delta: 30, bytes: [0xF8]),
        ]
        let parsed = try RTPMIDIPacket(
            parsing: try RTPMIDIPacket.serialize(sequence: 1, timestamp: 0, ssrc: 2, commands: late))
        #expect(parsed.commands == late)
        let backwards: [RTPMIDIPacket.Command] = [.init(delta: 10, bytes: [0xF8]), .init(delta: 5, bytes: [0xF8])]
        #expect(throws: RTPMIDIPacketError.self) {
            try RTPMIDIPacket.serialize(sequence: 1, timestamp: 0, ssrc: 2, commands: backwards)
        }
        let far: [RTPMIDIPacket.Command] = [.init(delta: 0, bytes: [0xF8]), .init(delta: 1 << 28, bytes: [0xF8])]
        #expect(throws: RTPMIDIPacketError.self) {
            try RTPMIDIPacket.serialize(sequence: 1, timestamp: 0, ssrc: 2, commands: far)
        }
        let long = (0..<1_400).map { _ in RTPMIDIPacket.Command(delta: 0, bytes: [0x90, 0x3C, 0x40]) }
        #expect(
            throws: RTPMIDIPacketError.cannotSerialize("a command list of 5599 bytes (a packet holds at most 4095)")
        ) {
            try RTPMIDIPacket.serialize(sequence: 1, timestamp: 0, ssrc: 2, commands: long)
        }
    }
}
