// A channel journal's bytes (RFC 6295 §5.2, Figure 9, and Appendix A): a 3-octet header
// (S, CHAN, H, LENGTH, and the table of contents P C M W N E T A), then the chapters in that
// order. LENGTH counts the whole channel journal, header included.
extension ChannelJournal {
    /// The table-of-contents bits, chapter by chapter.
    enum Chapter {
        static let program: UInt8 = 0x80
        static let controllers: UInt8 = 0x40
        static let parameters: UInt8 = 0x20
        static let pitchWheel: UInt8 = 0x10
        static let notes: UInt8 = 0x08
        static let noteExtras: UInt8 = 0x04
        static let channelPressure: UInt8 = 0x02
        static let polyPressure: UInt8 = 0x01
    }

    /// Reads one channel journal at the reader's position, stepping over exactly its LENGTH
    /// octets whatever its chapters hold.
    init(reading reader: inout JournalReader) throws(RTPMIDIPacketError) {
        let first = try reader.u8()
        let length = Int(first & 0x03) << 8 | Int(try reader.u8())
        let contents = try reader.u8()
        guard length >= 3 else { throw JournalReader.malformed("a channel journal of \(length) octets (at least 3)") }
        var chapters = try reader.sub(count: length - 3, what: "channel journal")
        self.init(channel: first >> 3 & 0x0F)
        isSinglePacketLossIrrelevant = first & 0x80 != 0
        hasEnhancedControllers = first & 0x04 != 0
        if contents & Chapter.program != 0 {
            let bytes = try chapters.bytes(3)
            program = Program(
                program: bytes[0] & 0x7F, bank: bytes[1] & 0x80 != 0 ? (bytes[1] & 0x7F, bytes[2] & 0x7F) : nil)
            program?.isSinglePacketLossIrrelevant = bytes[0] & 0x80 != 0
        }
        if contents & Chapter.controllers != 0 {
            let count = Int(try chapters.u8() & 0x7F) + 1
            for _ in 0..<count {
                let bytes = try chapters.bytes(2)
                var log = ControllerLog(controller: bytes[0] & 0x7F, value: bytes[1] & 0x7F)
                log.isSinglePacketLossIrrelevant = bytes[0] & 0x80 != 0
                if bytes[1] & 0x80 != 0 {
                    log.value = nil
                    log.alternative = bytes[1] & 0x7F
                }
                controllers.append(log)
            }
        }
        if contents & Chapter.parameters != 0 { parameters = try Parameters(reading: &chapters) }
        if contents & Chapter.pitchWheel != 0 {
            let bytes = try chapters.bytes(2)
            pitchWheel = (bytes[0] & 0x7F, bytes[1] & 0x7F)
        }
        if contents & Chapter.notes != 0 { notes = try Notes(reading: &chapters) }
        if contents & Chapter.noteExtras != 0 {
            let count = Int(try chapters.u8() & 0x7F) + 1
            _ = try chapters.bytes(2 * count)
            skippedChapters.insert(.noteExtras)
        }
        if contents & Chapter.channelPressure != 0 { channelPressure = try chapters.u8() & 0x7F }
        if contents & Chapter.polyPressure != 0 {
            let count = Int(try chapters.u8() & 0x7F) + 1
            for _ in 0..<count {
                let bytes = try chapters.bytes(2)
                var log = PressureLog(note: bytes[0] & 0x7F, pressure: bytes[1] & 0x7F)
                log.isSinglePacketLossIrrelevant = bytes[0] & 0x80 != 0
                log.isCancelled = bytes[1] & 0x80 != 0
                polyPressure.append(log)
            }
        }
    }

    /// The channel journal's bytes (nothing for a journal without chapters). Controller and
    /// pressure logs beyond 128 are left out (a channel has at most 128 of each).
    func serialized() -> [UInt8] {
        var contents: UInt8 = 0
        var body: [UInt8] = []
        let s = { (irrelevant: Bool) -> UInt8 in irrelevant ? 0x80 : 0 }
        if let program {
            contents |= Chapter.program
            body += [
                s(program.isSinglePacketLossIrrelevant) | program.program & 0x7F,
                (program.bank == nil ? 0 : 0x80) | (program.bank?.msb ?? 0) & 0x7F, (program.bank?.lsb ?? 0) & 0x7F,
            ]
        }
        if !controllers.isEmpty {
            contents |= Chapter.controllers
            let logs = controllers.prefix(128)
            let irrelevant = logs.allSatisfy(\.isSinglePacketLossIrrelevant)
            body.append(s(irrelevant) | UInt8(logs.count - 1))
            for log in logs {
                body.append(s(log.isSinglePacketLossIrrelevant) | log.controller & 0x7F)
                body.append(log.value.map { $0 & 0x7F } ?? 0x80 | log.alternative & 0x7F)
            }
        }
        // Chapter M goes here, written last with the room the others leave (LENGTH has 10 bits).
        let parametersAt = body.count
        if let pitchWheel {
            contents |= Chapter.pitchWheel
            body += [s(isSinglePacketLossIrrelevant) | pitchWheel.lsb & 0x7F, pitchWheel.msb & 0x7F]
        }
        if let notes, !notes.logs.isEmpty || !notes.released.isEmpty {
            contents |= Chapter.notes
            body += notes.serialized()
        }
        if let channelPressure {
            contents |= Chapter.channelPressure
            body.append(s(isSinglePacketLossIrrelevant) | channelPressure & 0x7F)
        }
        if !polyPressure.isEmpty {
            contents |= Chapter.polyPressure
            let logs = polyPressure.prefix(128)
            body.append(s(logs.allSatisfy(\.isSinglePacketLossIrrelevant)) | UInt8(logs.count - 1))
            for log in logs {
                body.append(s(log.isSinglePacketLossIrrelevant) | log.note & 0x7F)
                body.append((log.isCancelled ? 0x80 : 0) | log.pressure & 0x7F)
            }
        }
        if let chapter = parameters?.serialized(maximumOctets: 1023 - 3 - body.count), !chapter.isEmpty {
            contents |= Chapter.parameters
            body.insert(contentsOf: chapter, at: parametersAt)
        }
        guard contents != 0 else { return [] }
        let length = body.count + 3
        return [
            s(isSinglePacketLossIrrelevant) | (channel & 0x0F) << 3 | UInt8(length >> 8 & 0x03),
            UInt8(truncatingIfNeeded: length), contents,
        ] + body
    }
}

extension ChannelJournal.Notes {
    /// Chapter N: B(1) LEN(7) LOW(4) HIGH(4), LEN note logs, then the OFFBITS octets LOW…HIGH
    /// (octet k codes notes 8k…8k+7, the most significant bit the lowest). LEN 127 with LOW 15
    /// and HIGH 0 codes 128 logs and no OFFBITS; LOW 15 with HIGH 1 (or 0) no OFFBITS. (Other
    /// LOW above HIGH is not allowed; it is read as no OFFBITS.) B is the S bit of the OFFBITS.
    init(reading reader: inout JournalReader) throws(RTPMIDIPacketError) {
        let header = try reader.bytes(2)
        let length = Int(header[0] & 0x7F)
        let low = Int(header[1] >> 4)
        let high = Int(header[1] & 0x0F)
        let count = length == 127 && low == 15 && high == 0 ? 128 : length
        self.init()
        isSinglePacketLossIrrelevant = header[0] & 0x80 != 0
        for _ in 0..<count {
            let bytes = try reader.bytes(2)
            var log = ChannelJournal.NoteLog(
                note: bytes[0] & 0x7F, velocity: bytes[1] & 0x7F, isRecommendedToPlay: bytes[1] & 0x80 != 0)
            log.isSinglePacketLossIrrelevant = bytes[0] & 0x80 != 0
            logs.append(log)
        }
        guard low <= high else { return }
        for octet in low...high {
            let bits = try reader.u8()
            for bit in 0..<8 where bits & (0x80 >> bit) != 0 { released.insert(UInt8(octet * 8 + bit)) }
        }
    }

    func serialized() -> [UInt8] {
        let logs = self.logs.prefix(128)
        let noted = logs.count == 128
        // 128 logs leave no room for OFFBITS (LOW 15, HIGH 0 then says "128").
        let offNotes = noted ? [] : released.filter { $0 < 128 }.sorted()
        var header: [UInt8]
        var offbits: [UInt8] = []
        if noted {
            header = [0x7F, 0xF0]
        } else if let lowest = offNotes.first, let highest = offNotes.last {
            let low = Int(lowest) / 8
            let high = Int(highest) / 8
            offbits = [UInt8](repeating: 0, count: high - low + 1)
            for note in offNotes { offbits[Int(note) / 8 - low] |= 0x80 >> (note % 8) }
            header = [UInt8(logs.count), UInt8(low << 4 | high)]
        } else {
            header = [UInt8(logs.count), 0xF1]  // LOW 15, HIGH 1: no OFFBITS (whatever LEN is)
        }
        if isSinglePacketLossIrrelevant { header[0] |= 0x80 }
        var bytes = header
        for log in logs {
            bytes.append((log.isSinglePacketLossIrrelevant ? 0x80 : 0) | log.note & 0x7F)
            bytes.append((log.isRecommendedToPlay ? 0x80 : 0) | log.velocity & 0x7F)
        }
        return bytes + offbits
    }
}
