import MIDICore
import Testing

@testable import MIDIIO

/// The system journal's chapter X (RFC 6295 B.5): SysEx commands coded whole with their number in
/// the session, so that a receiver that lost some sends those it missed, and only those.
@Suite("RTP-MIDI journal chapter X: SysEx")
struct SysExJournalTests {
    static let gmOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]
    static func masterVolume(_ value: UInt8) -> [UInt8] { [0x7F, 0x7F, 0x04, 0x01, 0x00, value] }

    @Test("a log's octets: header, TCOUNT, DATA ending on F7; read back the same")
    func octets() throws {
        let system = SystemJournal(sysEx: [.init(payload: Self.gmOn, totalCount: 3)])
        let bytes = system.serialized()
        // S D V Q F X LENGTH: X set, 9 octets; the log: T D L STA=3, TCOUNT 3, 7E 7F 09 01 F7.
        #expect(bytes == [0x04, 9, 0x4F, 3, 0x7E, 0x7F, 0x09, 0x01, 0xF7])
        var reader = JournalReader(bytes[...])
        #expect(try SystemJournal(reading: &reader) == system)
        for end in 0..<bytes.count {
            var cut = JournalReader(bytes[..<end])
            #expect(throws: RTPMIDIPacketError.self) { try SystemJournal(reading: &cut) }
        }
    }

    @Test(
        "the history codes each SysEx since the checkpoint with its number; RS trims; a long one is counted, not coded")
    func history() throws {
        var history = JournalHistory(firstSequence: 10)
        history.record(.systemExclusive(Self.gmOn), inPacket: 10)
        history.record(.noteOn(channel: 0, note: 60, velocity: 90), inPacket: 11)
        history.record(.systemExclusive(Self.masterVolume(100)), inPacket: 12)
        var system = try #require(history.journal(forPacket: 13).systemJournal)
        #expect(system.sysEx.map(\.payload) == [Self.gmOn, Self.masterVolume(100)])
        #expect(system.sysEx.map(\.totalCount) == [1, 2])
        #expect(system.sysEx.map(\.isSinglePacketLossIrrelevant) == [true, false])
        #expect(!system.isSinglePacketLossIrrelevant)
        history.acknowledge(through: 11)
        history.record(.systemExclusive([UInt8](repeating: 0x11, count: 300)), inPacket: 13)
        history.record(.systemExclusive(Self.masterVolume(90)), inPacket: 14)
        system = try #require(history.journal(forPacket: 15).systemJournal)
        #expect(system.sysEx.map(\.totalCount) == [2, 3, 4])
        #expect(system.sysEx[1].data == nil, "the 300-octet dump: its number alone")
        history.acknowledge(through: 14)
        #expect(history.journal(forPacket: 15).systemJournal == nil)
        // Many at once: the journal keeps the most recent that fit in 1023 octets.
        for index in 0..<10 {
            history.record(.systemExclusive([UInt8](repeating: UInt8(index), count: 200)), inPacket: 15)
        }
        let bytes = history.journal(forPacket: 16).serialized()
        let read = try RecoveryJournal(parsing: bytes[...])
        #expect(bytes.count <= 3 + 1023 && read.systemJournal?.sysEx.last?.totalCount == 14)
        #expect((read.systemJournal?.sysEx.count ?? 0) >= 4)
    }

    @Test("a receiver that lost SysEx packets sends each missed command once, before the channel repairs")
    func repairs() {
        let stream: [MIDIMessage] = [
            .systemExclusive(Self.gmOn), .programChange(channel: 0, program: 5),
            .systemExclusive(Self.masterVolume(100)), .systemExclusive([UInt8](repeating: 0x22, count: 400)),
            .systemExclusive(Self.masterVolume(80)), .noteOn(channel: 0, note: 60, velocity: 90),
        ]
        for lost in stream.indices {
            var history = JournalHistory(firstSequence: 0)
            var heard = MIDIChannelStates()
            var delivered: [MIDIMessage] = []
            var gap = false
            for (index, message) in stream.enumerated() {
                let journal = history.journal(forPacket: UInt16(index))
                history.record(message, inPacket: UInt16(index))
                guard index != lost else {
                    gap = true
                    continue
                }
                if gap {
                    let repairs = heard.repairs(from: journal)
                    for repair in repairs { heard.apply(repair) }
                    heard.noteRepaired(from: journal)
                    delivered += repairs
                    gap = false
                }
                heard.apply(message)
                delivered.append(message)
            }
            let sysEx = delivered.compactMap { message -> [UInt8]? in
                if case .systemExclusive(let payload) = message { return payload } else { return nil }
            }
            var wanted = stream.compactMap { message -> [UInt8]? in
                if case .systemExclusive(let payload) = message { return payload } else { return nil }
            }
            // The 400-octet command is not coded: lost, it stays lost; the rest arrives once each.
            if lost == 3 { wanted.remove(at: 2) }
            if lost == stream.count - 1 { continue }  // no packet after it to repair
            #expect(sysEx == wanted, "message \(lost) lost")
            #expect(heard.sysExCount == 4, "message \(lost) lost: count \(heard.sysExCount)")
        }
    }

    @Test("a lost GM System On and the program after it: the SysEx first, then the program")
    func order() {
        var history = JournalHistory(firstSequence: 0)
        history.record(.systemExclusive(Self.gmOn), inPacket: 0)
        history.record(.programChange(channel: 0, program: 5), inPacket: 0)
        let repairs = MIDIChannelStates().repairs(from: history.journal(forPacket: 1))
        #expect(repairs == [.systemExclusive(Self.gmOn), .programChange(channel: 0, program: 5)])
    }

    @Test("a peer that never acknowledges: 130 long dumps and 10 short commands, one packet lost, nothing sent twice")
    func manyUnacknowledged() {
        var history = JournalHistory(firstSequence: 0)
        var heard = MIDIChannelStates()
        var sequence: UInt16 = 0
        for index in 0..<140 {
            let payload = [UInt8](repeating: UInt8(index % 100), count: index < 130 ? 300 : 4)
            history.record(.systemExclusive(payload), inPacket: sequence)
            heard.apply(.systemExclusive(payload))
            sequence += 1
        }
        // Packet `sequence` (a note) is lost; the next one's journal still numbers every command.
        history.record(.noteOn(channel: 0, note: 60, velocity: 90), inPacket: sequence)
        let journal = history.journal(forPacket: sequence + 1)
        #expect((journal.systemJournal?.sysEx.count ?? 0) <= 64)
        let repairs = heard.repairs(from: journal)
        #expect(repairs == [.noteOn(channel: 0, note: 60, velocity: 90)], "\(repairs.count) repairs")
        heard.noteRepaired(from: journal)
        #expect(heard.sysExCount == 140)
    }
}
