/// The system journal of a recovery journal (RFC 6295 Appendix B): what the stream's system
/// commands left in effect. Chapter X (System Exclusive) is read and written; chapters D (reset,
/// tune request, song select, undefined commands), V (active sense), Q (sequencer state) and F
/// (MIDI Time Code) are read only as far as their sizes, to step over them (`skippedChapters`).
public struct SystemJournal: Equatable, Sendable {
    /// A log of chapter X: one SysEx command (or the part of one) the stream carried since the
    /// checkpoint (RFC 6295 B.5).
    public struct SysExLog: Equatable, Sendable {
        /// How the command ended (STA).
        public enum Status: UInt8, Sendable {
            /// Not ended yet: DATA holds its first part.
            case unfinished = 0
            /// Cancelled by a status octet before its end.
            case cancelled = 1
            /// Ended without its F7.
            case droppedEnd = 2
            /// Ended with F7, as a SysEx normally ends.
            case finished = 3
        }

        /// The log's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// TCOUNT: the command's number among the SysEx commands sent in the session (counted
        /// from 1, modulo 256), so that a receiver can tell which it missed.
        public var totalCount: UInt8?
        /// COUNT, as read (not written).
        public var count: UInt8?
        /// FIRST, as read: where DATA starts within a long command (not written).
        public var first: UInt32?
        /// The L bit: the log is part of a list of every such command (true), not the most recent one only.
        public var isList = true
        /// STA.
        public var status: Status = .finished
        /// DATA: the command's octets after F0, through its end octet (F7 for a finished command),
        /// as 7-bit values; nil when the log has no DATA (the D bit).
        public var data: [UInt8]?

        /// A log of the finished SysEx command whose octets between F0 and F7 are `payload`,
        /// the `totalCount`-th of the session.
        public init(payload: [UInt8], totalCount: UInt8?) {
            self.totalCount = totalCount
            data = payload.map { $0 & 0x7F } + [0x77]
        }

        /// The command's octets between F0 and F7, when the log holds a whole finished command.
        public var payload: [UInt8]? {
            guard status == .finished, first == nil || first == 0, let data, data.last == 0x77 else { return nil }
            return Array(data.dropLast())
        }
    }

    /// The system chapters this type steps over.
    public enum SkippedChapter: Hashable, Sendable {
        /// Chapter D: reset, tune request, song select and the undefined commands.
        case simpleCommands
        /// Chapter V: active sense.
        case activeSense
        /// Chapter Q: sequencer state.
        case sequencer
        /// Chapter F: MIDI Time Code.
        case timeCode
    }

    /// The system journal's S bit.
    public var isSinglePacketLossIrrelevant = false
    /// Chapter X's logs, oldest first (empty: no chapter X).
    public var sysEx: [SysExLog]
    /// The chapters read only to step over them.
    public var skippedChapters: Set<SkippedChapter> = []

    /// A system journal holding `sysEx` in chapter X.
    public init(sysEx: [SysExLog] = []) { self.sysEx = sysEx }

    /// S D V Q F X LENGTH(10), then chapters D, V, Q, F and X in that order; chapter X fills the
    /// rest of LENGTH, a list of logs.
    init(reading reader: inout JournalReader) throws(RTPMIDIPacketError) {
        var (flags, chapters) = try reader.lengthPrefixed("system journal")
        self.init()
        isSinglePacketLossIrrelevant = flags & 0x80 != 0
        if flags & 0x40 != 0 {
            try Self.skipSimpleCommands(&chapters)
            skippedChapters.insert(.simpleCommands)
        }
        if flags & 0x20 != 0 {
            _ = try chapters.u8()
            skippedChapters.insert(.activeSense)
        }
        if flags & 0x10 != 0 {
            // S N D C T TOP(3), CLOCK (2 octets) when C, TIMETOOLS (3) when T.
            let first = try chapters.u8()
            _ = try chapters.bytes((first & 0x10 != 0 ? 2 : 0) + (first & 0x08 != 0 ? 3 : 0))
            skippedChapters.insert(.sequencer)
        }
        if flags & 0x08 != 0 {
            // S C P Q D POINT(3), COMPLETE (4 octets) when C, PARTIAL (4) when P.
            let first = try chapters.u8()
            _ = try chapters.bytes((first & 0x40 != 0 ? 4 : 0) + (first & 0x20 != 0 ? 4 : 0))
            skippedChapters.insert(.timeCode)
        }
        if flags & 0x04 != 0 {
            repeat { sysEx.append(try SysExLog(reading: &chapters)) } while !chapters.isAtEnd
        }
    }

    /// Chapter D: a TOC (S B G H J K Y Z), the one-octet fields B (reset), G (tune request) and H
    /// (song select), then the logs J and K (undefined common commands: S C V L DSZ(2) LENGTH(10),
    /// LENGTH counting the whole log) and Y and Z (undefined real-time commands: LENGTH in the
    /// TOC's low 5 bits).
    private static func skipSimpleCommands(_ reader: inout JournalReader) throws(RTPMIDIPacketError) {
        let contents = try reader.u8()
        _ = try reader.bytes([0x40, 0x20, 0x10].filter { contents & $0 != 0 }.count)
        for _ in [0x08, 0x04].filter({ contents & $0 != 0 }) {
            let head = try reader.bytes(2)
            let size = Int(head[0] & 0x03) << 8 | Int(head[1])
            guard size >= 2 else { throw JournalReader.malformed("a chapter D log of \(size) octets") }
            _ = try reader.bytes(size - 2)
        }
        for _ in [0x02, 0x01].filter({ contents & $0 != 0 }) {
            let size = Int(try reader.u8() & 0x1F)
            guard size >= 1 else { throw JournalReader.malformed("a chapter D log of 0 octets") }
            _ = try reader.bytes(size - 1)
        }
    }

    /// The system journal's octets: header, then chapter X when there are logs. At most the
    /// most recent logs that fit its 10-bit LENGTH are written.
    func serialized() -> [UInt8] {
        var body: [UInt8] = []
        for log in sysEx.reversed() {
            let bytes = log.serialized()
            guard body.count + bytes.count + 2 <= 1023 else { break }
            body = bytes + body
        }
        let length = body.count + 2
        let flags: UInt8 = (isSinglePacketLossIrrelevant ? 0x80 : 0) | (body.isEmpty ? 0 : 0x04)
        return [flags | UInt8(length >> 8 & 0x03), UInt8(truncatingIfNeeded: length)] + body
    }
}

extension SystemJournal.SysExLog {
    /// S T C F D L STA(2), TCOUNT when T, COUNT when C, FIRST (7 bits an octet, the top bit set
    /// on all but its last) when F, DATA (7-bit octets, the top bit set on the last) when D.
    init(reading reader: inout JournalReader) throws(RTPMIDIPacketError) {
        let header = try reader.u8()
        self.init(payload: [], totalCount: nil)
        data = nil
        isSinglePacketLossIrrelevant = header & 0x80 != 0
        isList = header & 0x04 != 0
        status = Status(rawValue: header & 0x03) ?? .finished
        if header & 0x40 != 0 { totalCount = try reader.u8() }
        if header & 0x20 != 0 { count = try reader.u8() }
        if header & 0x10 != 0 {
            var value: UInt32 = 0
            for index in 0..<4 {
                let octet = try reader.u8()
                value = value << 7 | UInt32(octet & 0x7F)
                if octet & 0x80 == 0 { break }
                if index == 3 { throw JournalReader.malformed("a chapter X FIRST of more than 4 octets") }
            }
            first = value
        }
        if header & 0x08 != 0 {
            var octets: [UInt8] = []
            while true {
                let octet = try reader.u8()
                octets.append(octet & 0x7F)
                if octet & 0x80 != 0 { break }
            }
            data = octets
        }
    }

    func serialized() -> [UInt8] {
        var bytes: [UInt8] = [
            (isSinglePacketLossIrrelevant ? 0x80 : 0) | (totalCount == nil ? 0 : 0x40) | (data == nil ? 0 : 0x08)
                | (isList ? 0x04 : 0) | status.rawValue
        ]
        if let totalCount { bytes.append(totalCount) }
        if let data, !data.isEmpty {
            bytes += data.dropLast().map { $0 & 0x7F }
            bytes.append(0x80 | data[data.count - 1])
        } else if data != nil {
            bytes[0] &= ~0x08
        }
        return bytes
    }
}
