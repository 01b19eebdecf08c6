import MIDICore
import Testing

@testable import MIDIIO

/// The recovery journal (RFC 6295): its bytes both ways, the sender's history, and the receiver's
/// repair checked against the sender's state after losses.
@Suite("RTP-MIDI recovery journal")
struct RecoveryJournalTests {
    /// A journal with every chapter this side writes, on two channels.
    func everyChapter() -> RecoveryJournal {
        var piano = ChannelJournal(channel: 0)
        piano.program = .init(program: 24, bank: (1, 2))
        piano.controllers = [.init(controller: 7, value: 100), .init(controller: 64, value: 127)]
        piano.pitchWheel = (lsb: 0x11, msb: 0x50)
        piano.notes = .init(
            logs: [.init(note: 60, velocity: 90), .init(note: 67, velocity: 40)], released: [62, 64, 80])
        piano.channelPressure = 33
        piano.polyPressure = [.init(note: 60, pressure: 12)]
        var drums = ChannelJournal(channel: 9)
        drums.notes = .init(logs: [], released: [36])
        var decay = ChannelJournal.ParameterLog(
            parameter: ParameterNumber(0x0123, isNonRegistered: true), entryMSB: 5, entryLSB: 6, increments: -3)
        decay.precedesReset = true
        drums.parameters = .init(
            logs: [.init(parameter: ParameterNumber(0), entryMSB: 2, entryLSB: 0), decay], isFinalLogActive: true)
        return RecoveryJournal(checkpoint: 0xFFFE, channels: [piano, drums])
    }

    @Test("every chapter written and read back the same; LENGTH counts each channel journal")
    func roundTrip() throws {
        let journal = everyChapter()
        let bytes = journal.serialized()
        // Header: A set, TOTCHAN 1 (two channel journals), checkpoint 0xFFFE.
        #expect(Array(bytes.prefix(3)) == [0x21, 0xFF, 0xFE])
        // Channel 0: S 0, CHAN 0, H 0, LENGTH; TOC P C W N T A.
        let length = Int(bytes[3] & 0x03) << 8 | Int(bytes[4])
        #expect(bytes[3] >> 3 & 0x0F == 0 && bytes[5] == 0b1101_1011)
        // Channel 9 right after it: chapters M and N.
        #expect(bytes[3 + length] >> 3 & 0x0F == 9 && bytes[3 + length + 2] == 0b0010_1000)
        #expect(3 + length + (Int(bytes[3 + length] & 0x03) << 8 | Int(bytes[4 + length])) == bytes.count)
        let read = try RecoveryJournal(parsing: bytes[...])
        #expect(read == journal)
    }

    @Test("chapter N's bytes: logs, then OFFBITS from LOW to HIGH, the lowest note the top bit")
    func noteChapterBytes() throws {
        let notes = ChannelJournal.Notes(logs: [.init(note: 60, velocity: 90)], released: [62, 64, 80])
        // LEN 1, LOW 7 (notes 56-63), HIGH 10 (80-87); log 60/90 with Y; octets 7…10 (62 is bit 6 of 7).
        #expect(notes.serialized() == [0x01, 0x7A, 60, 0x80 | 90, 0b0000_0010, 0b1000_0000, 0, 0b1000_0000])
        // No released notes: LOW 15, HIGH 1, no OFFBITS (LOW 15, HIGH 0 would say 128 logs with LEN 127).
        #expect(ChannelJournal.Notes(logs: [.init(note: 1, velocity: 2)]).serialized() == [0x01, 0xF1, 1, 0x82])
        let full = ChannelJournal.Notes(logs: (0..<127).map { .init(note: UInt8($0), velocity: 1) })
        var reader = JournalReader(full.serialized()[...])
        #expect(try ChannelJournal.Notes(reading: &reader).logs.count == 127 && reader.isAtEnd)
        let all = ChannelJournal.Notes(logs: (0..<128).map { .init(note: UInt8($0), velocity: 1) })
        #expect(Array(all.serialized().prefix(2)) == [0x7F, 0xF0])
        reader = JournalReader(all.serialized()[...])
        #expect(try ChannelJournal.Notes(reading: &reader).logs.count == 128 && reader.isAtEnd)
    }

    @Test("a chapter N holding nothing (no log, no OFFBIT set) makes an empty channel journal, not written")
    func emptyNoteChapter() throws {
        // Found by the fuzzer: channel 0 with chapter N of 0 logs and one OFFBITS octet of 0.
        let read = try RecoveryJournal(parsing: [0x20, 0x00, 0x01, 0x00, 0x06, 0x08, 0x00, 0x00, 0x00][...])
        #expect(read.channels.count == 1 && read.channels[0].isEmpty)
        #expect(read.serialized() == [0x00, 0x00, 0x01])
    }

    @Test("chapter E and system chapters D, V, Q, F are stepped over; chapter X is read")
    func skipsWhatItDoesNotAct() throws {
        // Y and A set, TOTCHAN 0; a system journal of D (reset field, an F9 log), V, Q (CLOCK),
        // F (COMPLETE) and X (a GM System On, the session's 7th SysEx); channel 3 with M (one log
        // of RPN 257 without fields), W, E (1 log).
        let chapterX: [UInt8] = [0x4F, 7, 0x7E, 0x7F, 0x09, 0x01, 0xF7]
        let systemChapters: [UInt8] =
            [0x42, 0x05, 0x02, 0x09] + [0x05] + [0x10, 1, 2] + [0x40, 1, 2, 3, 4] + chapterX
        let system: [UInt8] = [0x7C, UInt8(2 + systemChapters.count)] + systemChapters
        let chapters: [UInt8] = [0x00, 0x05, 0x01, 0x02, 0x00, 0x05, 0x40, 0x00, 0x10, 0x7F]
        let channel: [UInt8] = [3 << 3, UInt8(3 + chapters.count), 0b0011_0100] + chapters
        let read = try RecoveryJournal(parsing: ([0x60, 0x00, 0x07] + system + channel)[...])
        var gmOn = SystemJournal.SysExLog(payload: [0x7E, 0x7F, 0x09, 0x01], totalCount: 7)
        gmOn.isList = true
        #expect(read.systemJournal?.sysEx == [gmOn])
        #expect(read.systemJournal?.skippedChapters == [.simpleCommands, .activeSense, .sequencer, .timeCode])
        #expect(read.systemJournal?.sysEx.first?.payload == [0x7E, 0x7F, 0x09, 0x01])
        #expect(read.channels.count == 1 && read.channels[0].channel == 3)
        #expect(read.channels[0].pitchWheel?.lsb == 5 && read.channels[0].pitchWheel?.msb == 0x40)
        #expect(read.channels[0].skippedChapters == [.noteExtras])
        var log = ChannelJournal.ParameterLog(parameter: ParameterNumber(257))
        log.usesValueTool = false
        #expect(read.channels[0].parameters == ChannelJournal.Parameters(logs: [log]))
    }

    @Test("cut short or lying about its lengths: a typed error, never a trap")
    func malformed() {
        let bytes = everyChapter().serialized()
        for end in 0..<bytes.count {
            #expect(throws: RTPMIDIPacketError.self) { try RecoveryJournal(parsing: bytes[..<end]) }
        }
        var lying = bytes
        lying[4] = 0xFF  // channel 0's LENGTH past the end
        #expect(throws: RTPMIDIPacketError.self) { try RecoveryJournal(parsing: lying[...]) }
        var generator = SplitMix64(seed: 6295)
        for _ in 0..<20_000 {
            var mutated = bytes
            for _ in 0..<Int(generator.next() % 4 + 1) {
                mutated[Int(generator.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            if generator.next() % 3 == 0 { mutated.removeLast(Int(generator.next() % UInt64(mutated.count))) }
            if let journal = try? RecoveryJournal(parsing: mutated[...]) {
                _ = MIDIChannelStates().repairs(from: journal)
                _ = journal.serialized()
            }
        }
    }

    @Test("the history codes each channel's last state since the checkpoint; RS trims it")
    func history() throws {
        var history = JournalHistory(firstSequence: 100)
        history.record(.controlChange(channel: 0, controller: 0, value: 1), inPacket: 100)
        history.record(.controlChange(channel: 0, controller: 32, value: 2), inPacket: 100)
        history.record(.programChange(channel: 0, program: 5), inPacket: 100)
        history.record(.noteOn(channel: 0, note: 60, velocity: 80), inPacket: 101)
        history.record(.noteOn(channel: 0, note: 62, velocity: 70), inPacket: 101)
        history.record(.noteOff(channel: 0, note: 62, velocity: 0), inPacket: 102)
        history.record(.pitchBend(channel: 1, value: 0x2100), inPacket: 102)
        var journal = history.journal(forPacket: 103)
        #expect(journal.checkpoint == 100)
        #expect(journal.channels.map(\.channel) == [0, 1])
        let piano = journal.channels[0]
        #expect(piano.program?.program == 5 && piano.program?.bank?.msb == 1 && piano.program?.bank?.lsb == 2)
        #expect(piano.controllers.map(\.controller) == [0, 32])
        #expect(piano.notes?.logs.map(\.note) == [60] && piano.notes?.released == [62])
        #expect(journal.channels[1].pitchWheel?.msb == 0x42)
        // S bits: packet 102 changed the released note and the wheel, not the program.
        #expect(piano.program?.isSinglePacketLossIrrelevant == true)
        #expect(piano.notes?.isSinglePacketLossIrrelevant == false && !journal.isSinglePacketLossIrrelevant)
        // The receiver has 101: what 100 and 101 set is trimmed, 102's stays.
        history.acknowledge(through: 101)
        journal = history.journal(forPacket: 103)
        #expect(journal.checkpoint == 102)
        #expect(journal.channels[0].program == nil && journal.channels[0].notes?.logs.isEmpty == true)
        #expect(journal.channels[0].notes?.released == [62])
        history.acknowledge(through: 100)  // older: ignored
        #expect(history.checkpoint == 102)
        history.acknowledge(through: 102)
        #expect(history.journal(forPacket: 103).channels.isEmpty)
    }

    @Test("All Notes Off after RS trimmed the notes' Note Ons still codes them as released")
    func allNotesOffAfterTrim() {
        var history = JournalHistory(firstSequence: 10)
        history.record(.noteOn(channel: 2, note: 60, velocity: 90), inPacket: 10)
        history.record(.noteOn(channel: 2, note: 64, velocity: 90), inPacket: 10)
        history.record(.noteOff(channel: 2, note: 64, velocity: 0), inPacket: 11)
        history.acknowledge(through: 11)  // the receiver has 60 sounding, 64 released
        #expect(history.journal(forPacket: 12).channels.isEmpty)
        history.record(.controlChange(channel: 2, controller: 123, value: 0), inPacket: 12)  // lost
        let journal = history.journal(forPacket: 13)
        #expect(journal.channels.first?.notes?.released == [60])
        var receiver = MIDIChannelStates()
        receiver.apply(.noteOn(channel: 2, note: 60, velocity: 90))
        #expect(receiver.repairs(from: journal) == [.noteOff(channel: 2, note: 60, velocity: 0)])
    }

    @Test("a history no receiver acknowledges moves its checkpoint on before it spans half the sequence numbers")
    func rebase() {
        var history = JournalHistory(firstSequence: 0)
        history.record(.programChange(channel: 0, program: 7), inPacket: 0)
        history.rebase(to: 20_000)
        let journal = history.journal(forPacket: 20_001)
        #expect(journal.checkpoint == 20_000 && journal.channels.first?.program?.program == 7)
        history.acknowledge(through: 20_000)
        #expect(history.journal(forPacket: 20_001).channels.isEmpty)
    }

    @Test("a journal covers a loss when its checkpoint is no later than the first packet lost (mod 2^16)")
    func coverage() {
        #expect(RecoveryJournal(checkpoint: 10).covers(lossAfter: 9))
        #expect(RecoveryJournal(checkpoint: 5).covers(lossAfter: 9))
        #expect(!RecoveryJournal(checkpoint: 11).covers(lossAfter: 9))
        #expect(RecoveryJournal(checkpoint: 0).covers(lossAfter: 0xFFFF))
        #expect(!RecoveryJournal(checkpoint: 1).covers(lossAfter: 0xFFFF))
    }

    /// The state a test compares: each channel's sounding notes, controllers coded in chapter C,
    /// program, pitch wheel and channel pressure.
    func comparable(_ states: MIDIChannelStates) -> [String] {
        (0..<16).map { channel in
            let channel = UInt8(channel)
            let controllers = (0..<120).filter { ![6, 38, 96, 97, 98, 99, 100, 101].contains($0) }
                .map { states.controller(UInt8($0), onChannel: channel).map(String.init) ?? "-" }
            return "\(states.soundingNotes(onChannel: channel)) \(controllers) "
                + "\(String(describing: states.program(onChannel: channel))) "
                + "\(String(describing: states.pitchWheel(onChannel: channel))) "
                + "\(String(describing: states.channelPressure(onChannel: channel)))"
        }
    }

    @Test(
        "random streams, random losses (single, bursts, with and without RS): the repaired receiver equals the sender",
        arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func repairEqualsSender(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        func random(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        var history = JournalHistory(firstSequence: 0xFFF0)  // wraps around 0 on the way
        var sender = MIDIChannelStates()
        var receiver = MIDIChannelStates()
        var releasedAll = MIDIChannelStates()  // the fallback: everything released on a loss
        var lastReceived: UInt16?
        var sequence: UInt16 = 0xFFF0
        var repairs = 0
        for _ in 0..<400 {
            var commands: [MIDIMessage] = []
            for _ in 0..<(1 + random(4)) {
                let channel = UInt8(random(3))
                let message: MIDIMessage
                switch random(10) {
                case 0...3:
                    message = .noteOn(channel: channel, note: UInt8(48 + random(24)), velocity: UInt8(1 + random(127)))
                case 4...5: message = .noteOff(channel: channel, note: UInt8(48 + random(24)), velocity: 0)
                case 6:
                    message = .controlChange(
                        channel: channel, controller: [7, 10, 64, 1, 0, 32, 121, 123][random(8)],
                        value: UInt8(random(128)))
                case 7: message = .programChange(channel: channel, program: UInt8(random(128)))
                case 8: message = .pitchBend(channel: channel, value: UInt16(random(16_384)))
                default: message = .channelPressure(channel: channel, pressure: UInt8(random(128)))
                }
                commands.append(message)
            }
            let journal = history.journal(forPacket: sequence)
            // The packet's bytes go through the journal's serialization as they would on the wire.
            let wire = try? RecoveryJournal(parsing: journal.serialized()[...])
            #expect(wire == journal)
            let lost = seed % 2 == 0 ? random(10) < 2 : random(25) == 0 || (random(60) == 0)
            if !lost {
                if let last = lastReceived, sequence != last &+ 1 {
                    // A gap: the journal first, then the packet's commands.
                    #expect(journal.covers(lossAfter: last), "the checkpoint moved past what was lost")
                    for repair in receiver.repairs(from: journal) { receiver.apply(repair) }
                    repairs += 1
                    // The fallback: every sounding note released, the pedal up.
                    for channel in 0..<UInt8(16) {
                        for note in releasedAll.soundingNotes(onChannel: channel) {
                            releasedAll.apply(.noteOff(channel: channel, note: note, velocity: 0))
                        }
                        releasedAll.apply(.controlChange(channel: channel, controller: 64, value: 0))
                    }
                }
                for command in commands {
                    receiver.apply(command)
                    releasedAll.apply(command)
                }
                lastReceived = sequence
                // Odd seeds: receiver feedback now and then (for what it has, in order).
                if seed % 2 == 1, random(8) == 0 { history.acknowledge(through: sequence) }
            }
            for command in commands {
                sender.apply(command)
                history.record(command, inPacket: sequence)
            }
            sequence &+= 1
        }
        // A last packet (no commands) carries the journal of everything before it.
        if let last = lastReceived, sequence != last &+ 1 {
            for repair in receiver.repairs(from: history.journal(forPacket: sequence)) { receiver.apply(repair) }
            repairs += 1
        }
        #expect(repairs > 5)
        #expect(comparable(receiver) == comparable(sender))
        // Without the journal, releasing everything leaves the receiver wrong.
        #expect(comparable(releasedAll) != comparable(sender))
    }
}
