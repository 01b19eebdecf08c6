import MIDICore
import Testing

@testable import MIDIIO

/// Chapter M of the recovery journal (RFC 6295 A.4): RPN and NRPN values and the selection,
/// written by the sender's history, read back, and repaired from at the receiver.
@Suite("RTP-MIDI journal chapter M: RPN and NRPN")
struct ParameterJournalTests {
    static let bendRange = ParameterNumber(0)
    static let fineTuning = ParameterNumber(1)
    static let cutoff = ParameterNumber(0x0120, isNonRegistered: true)

    static func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIMessage {
        .controlChange(channel: channel, controller: controller, value: value)
    }

    @Test("a chapter M's octets: header, PENDING, short and long logs, signed A-BUTTON, X bits")
    func octets() throws {
        var chapter = ChannelJournal.Parameters(
            logs: [.init(parameter: Self.bendRange, entryMSB: 12, entryLSB: 0)], isFinalLogActive: true)
        // Every log an RPN below 128: U and Z set, logs without Q/PNUM-MSB.
        #expect(chapter.serialized() == [0b0011_0100, 6, 0x00, 0b1100_0010, 12, 0])
        var log = ChannelJournal.ParameterLog(parameter: Self.cutoff, increments: -5)
        log.precedesReset = true
        chapter.logs.append(log)
        chapter.pending = (msb: 3, isNonRegistered: false)
        chapter.isFinalLogActive = false
        let bytes = chapter.serialized()
        // P set, long logs; PENDING 3 (an RPN MSB); then NRPN 0x120: LSB 0x20, Q + MSB 2, L, G X 5.
        #expect(bytes == [0b0100_0000, 13, 3, 0x00, 0x00, 0b1100_0010, 12, 0, 0x20, 0x82, 0b0010_0010, 0xC0, 5])
        var reader = JournalReader(bytes[...])
        #expect(try ChannelJournal.Parameters(reading: &reader) == chapter)
        // A count beyond 14 bits is written as the most there is (no trap on Int.min).
        let extreme = ChannelJournal.Parameters(logs: [.init(parameter: Self.cutoff, increments: Int.min)])
        #expect(extreme.serialized().suffix(2) == [0xBF, 0xFF])
        // Cut anywhere inside, or a LENGTH past the end: a typed error.
        for end in 0..<bytes.count {
            var cut = JournalReader(bytes[..<end])
            #expect(throws: RTPMIDIPacketError.self) { try ChannelJournal.Parameters(reading: &cut) }
        }
    }

    @Test("the sender's history: values by the value tool, the active parameter last (E), PENDING, reset")
    func history() throws {
        var history = JournalHistory(firstSequence: 100)
        let stream: [[MIDIMessage]] = [
            [Self.cc(101, 0), Self.cc(100, 0), Self.cc(6, 12), Self.cc(38, 0)],  // bend range 12
            [Self.cc(99, 2), Self.cc(98, 0x20), Self.cc(6, 64), Self.cc(96, 0), Self.cc(96, 0)],  // cutoff
            [Self.cc(101, 0), Self.cc(100, 1)],  // fine tuning selected, no value yet
        ]
        for (index, packet) in stream.enumerated() {
            for message in packet { history.record(message, inPacket: 100 + UInt16(index)) }
        }
        var chapter = try #require(history.journal(forPacket: 103).channels.first?.parameters)
        #expect(chapter.logs.map(\.parameter) == [Self.bendRange, Self.cutoff, Self.fineTuning])
        #expect(chapter.logs[0].entryMSB == 12 && chapter.logs[0].entryLSB == 0)
        #expect(chapter.logs[1].entryMSB == 64 && chapter.logs[1].increments == 2)
        #expect(chapter.active == Self.fineTuning && chapter.pending == nil)
        #expect(chapter.logs.map(\.isSinglePacketLossIrrelevant) == [true, true, false])
        // Data Entry, Increment and the numbers are not chapter C's.
        #expect(history.journal(forPacket: 103).channels.first?.controllers.isEmpty == true)
        // An MSB alone: PENDING; the receiver acknowledged the first two packets.
        history.record(Self.cc(99, 5), inPacket: 103)
        history.acknowledge(through: 101)
        chapter = try #require(history.journal(forPacket: 104).channels.first?.parameters)
        #expect(chapter.logs.map(\.parameter) == [Self.fineTuning])
        #expect(chapter.pending?.msb == 5 && chapter.pending?.isNonRegistered == true && chapter.active == nil)
        // Reset All Controllers: the selection null, the values set before it (X).
        history.record(Self.cc(6, 1), inPacket: 104)  // goes to the pending NRPN (5, 0x20)
        history.record(Self.cc(121, 0), inPacket: 105)
        chapter = try #require(history.journal(forPacket: 106).channels.first?.parameters)
        #expect(chapter.active == nil && chapter.pending == nil)
        let valued = chapter.logs.filter { $0.entryMSB != nil }
        #expect(!valued.isEmpty && valued.allSatisfy { $0.precedesReset })
        #expect(chapter.logs.last?.parameter == ParameterNumber(5 << 7 | 0x20, isNonRegistered: true))
        // Data Entry with nothing selected is coded nowhere.
        history.acknowledge(through: 105)
        history.record(Self.cc(6, 9), inPacket: 106)
        #expect(history.journal(forPacket: 107).channels.isEmpty)
    }

    /// A song of parameter changes on two channels, a packet each, between notes and a wheel.
    static func song() -> [[MIDIMessage]] {
        [
            [Self.cc(101, 0), Self.cc(100, 0)], [Self.cc(6, 2)], [Self.cc(38, 0)],
            [.noteOn(channel: 0, note: 60, velocity: 90)], [.pitchBend(channel: 0, value: 0x3000)],
            [Self.cc(99, 2, channel: 1), Self.cc(98, 0x20, channel: 1), Self.cc(6, 40, channel: 1)],
            [Self.cc(96, 0, channel: 1)], [Self.cc(96, 0, channel: 1)], [Self.cc(97, 0, channel: 1)],
            [Self.cc(6, 12)],  // the bend range, still selected on channel 0
            [Self.cc(38, 50)], [Self.cc(6, 12)],  // 12.50, then 12 again: the MSB clears the LSB
            [Self.cc(101, 0), Self.cc(100, 1), Self.cc(6, 70)], [.noteOff(channel: 0, note: 60, velocity: 0)],
            [Self.cc(101, 0)], [Self.cc(100, 0)], [Self.cc(6, 7)],  // MSB and LSB apart
            [Self.cc(101, 127), Self.cc(100, 127)],  // null: Data Entry goes nowhere now
            [Self.cc(6, 99)], [Self.cc(99, 2, channel: 1)], [Self.cc(121, 0, channel: 1)],
            [.noteOn(channel: 0, note: 64, velocity: 80)],
        ]
    }

    static func describe(_ states: MIDIChannelStates) -> [String] {
        (0..<UInt8(2)).map { channel in
            let values = [bendRange, fineTuning, cutoff].map { parameter -> String in
                guard let log = states.parameter(parameter, onChannel: channel) else { return "-" }
                return "\(log.entryMSB ?? 255)/\(log.entryLSB ?? 255)+\(log.increments ?? 0)"
            }
            return "\(channel): \(values) selected \(String(describing: states.selectedParameter(onChannel: channel)))"
                + " notes \(states.soundingNotes(onChannel: channel))"
        }
    }

    @Test("every packet of a parameter song lost in turn: the next packet's journal repairs values and selection")
    func repairsEachLoss() {
        let song = Self.song()
        var bareWrong = 0
        for lost in song.indices {
            for stripped in [false, true] {
                var history = JournalHistory(firstSequence: 0)
                var sent = MIDIChannelStates()
                var heard = MIDIChannelStates()
                var gap = false
                var wrong: [Int] = []
                for (index, packet) in song.enumerated() {
                    let sequence = UInt16(index)
                    let journal = history.journal(forPacket: sequence)
                    for message in packet {
                        history.record(message, inPacket: sequence)
                        sent.apply(message)
                    }
                    guard index != lost else {
                        gap = true
                        continue
                    }
                    if gap && !stripped {
                        for repair in heard.repairs(from: journal) { heard.apply(repair) }
                    }
                    gap = false
                    for message in packet { heard.apply(message) }
                    if Self.describe(heard) != Self.describe(sent) { wrong.append(index) }
                }
                if stripped {
                    bareWrong += wrong.isEmpty ? 0 : 1
                } else {
                    #expect(wrong.isEmpty, "packet \(lost) lost: wrong after \(wrong)")
                }
            }
        }
        // Without the journal, most single losses leave a wrong value, selection or note (not
        // the Data Entry after the null selection, an MSB equal to the one before, the NRPN MSB
        // before the reset, the last packet: no packet comes after it here, and the like).
        #expect(bareWrong >= song.count - 7, "only \(bareWrong) of \(song.count) losses were wrong without it")
    }

    @Test("a receiver in the sender's state gets nothing; a late joiner gets the values, then the selection")
    func noRepairWhenEqual() throws {
        var history = JournalHistory(firstSequence: 0)
        var state = MIDIChannelStates()
        for (index, packet) in Self.song().prefix(13).enumerated() {
            for message in packet {
                history.record(message, inPacket: UInt16(index))
                state.apply(message)
            }
        }
        #expect(state.repairs(from: history.journal(forPacket: 13)).isEmpty)
        var joiner = MIDIChannelStates()
        for message in state.chase() { joiner.apply(message) }
        // The chase sends no notes: compare all but the notes sounding.
        func withoutNotes(_ states: MIDIChannelStates) -> [String] {
            Self.describe(states).map { String($0.prefix(upTo: $0.range(of: " notes")!.lowerBound)) }
        }
        #expect(withoutNotes(joiner) == withoutNotes(state))
        #expect(joiner.selectedParameter(onChannel: 0) == Self.fineTuning)
    }

    @Test("a channel journal full of chapters still fits its 10-bit LENGTH: chapter M gets the room left")
    func fullChannelJournal() throws {
        var history = JournalHistory(firstSequence: 0)
        for number in 0..<128 as Range<UInt8> {
            history.record(.controlChange(channel: 3, controller: number < 96 ? number : 1, value: 1), inPacket: 0)
            history.record(.noteOn(channel: 3, note: number, velocity: 64), inPacket: 0)
            history.record(.polyphonicKeyPressure(channel: 3, note: number, pressure: 9), inPacket: 0)
        }
        for number in 0..<100 as Range<UInt8> {
            for message in [Self.cc(99, number, channel: 3), Self.cc(98, 5, channel: 3), Self.cc(6, 7, channel: 3)] {
                history.record(message, inPacket: 0)
            }
        }
        let bytes = history.journal(forPacket: 1).serialized()
        let read = try RecoveryJournal(parsing: bytes[...])
        let channel = try #require(read.channels.first)
        #expect(Int(bytes[3] & 0x03) << 8 | Int(bytes[4]) == bytes.count - 3, "LENGTH counts the whole channel")
        #expect(channel.notes?.logs.count == 128 && channel.polyPressure.count == 128)
        // The most recent parameters that fit, the active one last.
        let chapter = try #require(channel.parameters)
        #expect(chapter.active == ParameterNumber(99 << 7 | 5, isNonRegistered: true) && chapter.logs.count < 100)
    }
}
