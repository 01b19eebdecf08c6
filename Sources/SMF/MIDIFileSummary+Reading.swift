import MIDICore

extension MIDIFileSummary {
    /// What `MIDIFileSummary.read` returns: the summary and what was wrong with the file.
    public struct ReadResult: Sendable {
        /// The summary of the music that could be read (see `MIDIFile.ReadResult.file`).
        public var summary: MIDIFileSummary
        /// Every defect the lenient reader recovered from, in file order; empty for a clean file.
        public var diagnostics: [MIDIFileDiagnostic]
        /// True when the SMF came wrapped in a RIFF RMID container.
        public var isRMID: Bool
    }

    /// Reads a Standard MIDI File or RIFF RMID file and summarizes it, without keeping its events.
    ///
    /// The result is what `MIDIFileSummary(MIDIFile.read(bytes:strict:threads:).file)` gives, with
    /// the same diagnostics and errors, but the events are digested as they are read: no event
    /// array is built, so a large file costs its bytes in memory rather than 16 bytes an event.
    public static func read(
        bytes: [UInt8], strict: Bool = false, threads: Int = 1
    ) throws(MIDIFileError) -> ReadResult {
        try bytes.withUnsafeBufferPointer { (buffer) throws(MIDIFileError) -> ReadResult in
            try read(buffer: buffer, strict: strict, threads: threads)
        }
    }

    static func read(
        buffer: UnsafeBufferPointer<UInt8>, strict: Bool, threads: Int
    ) throws(MIDIFileError) -> ReadResult {
        var reader = SMFReader(bytes: buffer, strict: strict, threads: threads)
        let chunks = try reader.readChunks(into: TrackDigest.self)
        let summary = MIDIFileSummary(format: chunks.format, division: chunks.division, digests: chunks.tracks)
        return ReadResult(summary: summary, diagnostics: reader.diagnostics, isRMID: chunks.isRMID)
    }

    /// Reads a file from disk and summarizes it (see `read(bytes:strict:threads:)`), bounded as
    /// `MIDIFile.readBytes(path:isCancelled:)` reads.
    public static func read(
        path: String, strict: Bool = false, threads: Int = 1, isCancelled: (() -> Bool)? = nil
    ) throws(MIDIFileError) -> ReadResult {
        try MIDIFile.withBytes(path: path, isCancelled: isCancelled) { (bytes) throws(MIDIFileError) in
            try read(buffer: bytes, strict: strict, threads: threads)
        }
    }

    /// What a summary keeps of one track, taken event by event.
    struct TrackDigest: TrackSink {
        var eventCount = 0
        /// Note-ons with a velocity above 0.
        var notes = 0
        /// Channels 0-15 as bits; others (only in files built in code) in a set.
        var channels: UInt16 = 0
        var otherChannels = Set<UInt8>()
        /// Program changes as (channel, program), in order of first appearance.
        var programs: [(UInt8, UInt8)] = []
        var seenPrograms = ProgramSet()
        /// The first Sequence/Track Name among the events at tick 0 before any later one.
        var name: String?
        var isPastTickZero = false
        var tempos: [(tick: Int, microsecondsPerQuarterNote: Int)] = []
        /// Time signatures as given (a denominator power of 31 or more as 0), and the valid ones.
        var signatures: [(Int, Int, Int)] = []
        var meters: [(tick: Int, numerator: Int, denominator: Int)] = []
        var keys: [(Int, String)] = []
        /// Lyric events, and the first 200 lines.
        var lyricEvents = (count: 0, lines: [String]())
        /// Text events that do not start with "@", and the first 200 lines (a karaoke file's lyrics).
        var karaokeText = (count: 0, lines: [String]())
        /// A Text event starting "@K" or "@T" was seen.
        var isKaraoke = false
        var markers = 0
        var lastTick = 0

        init() {}
        init(maximumEventCount: Int) {}

        /// What `append` does with the same message, without making it. Inlined into the
        /// reader's loop: it runs for almost every event.
        @inline(__always)
        mutating func appendChannelMessage(tick: Int, status: UInt8, _ first: UInt8, _ second: UInt8) {
            eventCount += 1
            lastTick = tick
            if tick != 0 { isPastTickZero = true }
            channels |= 1 << (status & 0x0F)
            switch status >> 4 {
            case 0x9:
                if second > 0 { notes += 1 }
            case 0xC:
                if seenPrograms.insert(channel: status & 0x0F, program: first) {
                    programs.append((status & 0x0F, first))
                }
            default:
                break
            }
        }

        mutating func append(_ event: MIDIFile.Event) {
            eventCount += 1
            lastTick = event.tick
            if event.tick != 0 { isPastTickZero = true }
            switch event.payload {
            case .channel(let message):
                if let channel = message.channel {
                    // Messages built in code may carry any channel number; files give 0-15.
                    if channel < 16 { channels |= 1 << channel } else { otherChannels.insert(channel) }
                }
                if message.isNoteStart { notes += 1 }
                if case .programChange(let channel, let program) = message,
                    seenPrograms.insert(channel: channel, program: program)
                {
                    programs.append((channel, program))
                }
            case .meta(.tempo(let tempo)):
                if tempo > 0 { tempos.append((event.tick, tempo)) }
            case .meta(.timeSignature(let numerator, let power, _, _)):
                signatures.append((event.tick, Int(numerator), power < 31 ? 1 << Int(power) : 0))
                if numerator > 0 && power < 31 { meters.append((event.tick, Int(numerator), 1 << Int(power))) }
            case .meta(.keySignature(let sharps, let minor)):
                keys.append((event.tick, MIDIFileSummary.keyName(sharps: Int(sharps), minor: minor)))
            case .meta(.text(.trackName, let bytes)):
                if name == nil && !isPastTickZero { name = MIDIFile.MetaEvent.decodeText(bytes) }
            case .meta(.text(.lyric, let bytes)):
                lyricEvents.count += 1
                if lyricEvents.lines.count < 200 { lyricEvents.lines.append(MIDIFile.MetaEvent.decodeText(bytes)) }
            case .meta(.text(.text, let bytes)):
                if bytes.first == UInt8(ascii: "@") {
                    if bytes.count >= 2 && (bytes[1] == UInt8(ascii: "K") || bytes[1] == UInt8(ascii: "T")) {
                        isKaraoke = true
                    }
                } else {
                    karaokeText.count += 1
                    if karaokeText.lines.count < 200 { karaokeText.lines.append(MIDIFile.MetaEvent.decodeText(bytes)) }
                }
            case .meta(.text(.marker, _)), .meta(.text(.cuePoint, _)):
                markers += 1
            default:
                break
            }
        }
    }
}

extension MIDIFileSummary.TrackSummary: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        a.index == b.index && a.name == b.name && a.channels == b.channels && a.noteCount == b.noteCount
            && a.eventCount == b.eventCount && a.programs.elementsEqual(b.programs) { $0 == $1 }
    }
}

extension MIDIFileSummary: Equatable {
    /// Field by field; a duration that is not a number equals another that is not.
    public static func == (a: Self, b: Self) -> Bool {
        a.format == b.format && a.division == b.division && a.trackCount == b.trackCount
            && a.noteCount == b.noteCount && a.eventCount == b.eventCount
            && (a.durationSeconds == b.durationSeconds || (a.durationSeconds.isNaN && b.durationSeconds.isNaN))
            && a.lengthInTicks == b.lengthInTicks && a.tempoChanges == b.tempoChanges
            && a.timeSignatures.elementsEqual(b.timeSignatures) { $0 == $1 }
            && a.keySignatures.elementsEqual(b.keySignatures) { $0 == $1 } && a.tracks == b.tracks
            && a.lyricCount == b.lyricCount && a.markerCount == b.markerCount && a.lyrics == b.lyrics
    }
}
