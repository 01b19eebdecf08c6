import MIDICore

extension MIDIFile {
    /// What `MIDIFile.read` returns: the music and what was wrong with the file.
    public struct ReadResult: Sendable {
        /// The music that could be read: the whole file when it is sound, what was recovered when it is
        /// damaged (an empty file when even the header is cut short).
        public var file: MIDIFile
        /// Every defect the lenient reader recovered from, in file order; empty for a clean file.
        public var diagnostics: [MIDIFileDiagnostic]
        /// True when the SMF came wrapped in a RIFF RMID container.
        public var isRMID: Bool
    }

    /// Reads a Standard MIDI File (format 0, 1 or 2) or a RIFF RMID file from its bytes.
    ///
    /// Lenient by default: a damaged file gives all the music that can be recovered plus a list of
    /// diagnostics. With `strict`, the first defect is thrown as `MIDIFileError.damaged`. Only
    /// bytes that hold no MIDI at all (empty, no `MThd`, a RIFF file that is not RMID) are
    /// rejected, with an error that says what the bytes are.
    ///
    /// With `threads` above 1, the tracks of a large file whose chunk lengths chain soundly are
    /// read on that many threads at once; the result (tracks, diagnostics, errors) is the same as
    /// with one.
    public static func read(
        bytes: [UInt8], strict: Bool = false, threads: Int = 1
    ) throws(MIDIFileError)
        -> ReadResult
    {
        try bytes.withUnsafeBufferPointer { (buffer) throws(MIDIFileError) -> ReadResult in
            try read(buffer: buffer, strict: strict, threads: threads)
        }
    }

    static func read(
        buffer: UnsafeBufferPointer<UInt8>, strict: Bool, threads: Int
    ) throws(MIDIFileError) -> ReadResult {
        var reader = SMFReader(bytes: buffer, strict: strict, threads: threads)
        return try reader.read()
    }
}

/// The reader's working state over one buffer. Offsets in diagnostics are file offsets.
struct SMFReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let strict: Bool
    /// Threads for reading tracks at once (see `readTracksAtOnce`).
    let threads: Int
    var diagnostics: [MIDIFileDiagnostic] = []

    init(bytes: UnsafeBufferPointer<UInt8>, strict: Bool, threads: Int = 1) {
        self.bytes = bytes
        self.strict = strict
        self.threads = threads
    }

    mutating func report(
        _ kind: MIDIFileDiagnostic.Kind, track: Int?, at offset: Int, _ message: String
    ) throws(MIDIFileError) {
        let diagnostic = MIDIFileDiagnostic(kind: kind, track: track, offset: offset, message: message)
        if strict { throw .damaged(diagnostic) }
        diagnostics.append(diagnostic)
    }

    // MARK: Bytes

    func u32(_ at: Int) -> Int {
        Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }
    func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }

    func matches(_ tag: StaticString, at offset: Int) -> Bool {
        let count = tag.utf8CodeUnitCount
        guard offset >= 0, offset + count <= bytes.count else { return false }
        let pointer = tag.utf8Start
        for index in 0..<count where bytes[offset + index] != pointer[index] { return false }
        return true
    }

    func find(_ tag: StaticString, from start: Int, to end: Int) -> Int? {
        var offset = start
        while offset + 4 <= end {
            if matches(tag, at: offset) { return offset }
            offset += 1
        }
        return nil
    }

    /// Four bytes that look like a chunk id (ASCII letters, digits or spaces).
    func looksLikeChunkID(at offset: Int) -> Bool {
        guard offset + 8 <= bytes.count else { return false }
        for index in offset..<offset + 4 {
            let byte = bytes[index]
            let isAlphanumeric =
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            guard isAlphanumeric || byte == 0x20 else { return false }
        }
        return true
    }

    // MARK: File structure

    mutating func read() throws(MIDIFileError) -> MIDIFile.ReadResult {
        let chunks = try readChunks(into: [MIDIFile.Event].self)
        let file = MIDIFile(
            format: chunks.format, division: chunks.division, tracks: chunks.tracks.map(MIDIFile.Track.init(events:)))
        return .init(file: file, diagnostics: diagnostics, isRMID: chunks.isRMID)
    }

    /// What the chunks of a file hold, each track in a sink of type `Sink`.
    struct Chunks<Sink: TrackSink> {
        var format: MIDIFile.Format
        var division: MIDIFile.Division
        var tracks: [Sink]
        var isRMID: Bool
    }

    /// Reads the header and every track into sinks of type `Sink`, recovering from damage and
    /// collecting diagnostics (or throwing the first, when strict).
    mutating func readChunks<Sink: TrackSink>(into _: Sink.Type) throws(MIDIFileError) -> Chunks<Sink> {
        guard !bytes.isEmpty else { throw .notMIDI(what: "the file is empty") }
        var start = 0
        var end = bytes.count
        var isRMID = false
        if matches("RIFF", at: 0) {
            guard matches("RMID", at: 8) else {
                throw .notMIDI(what: FileKind.describe(bytes))
            }
            isRMID = true
            (start, end) = try rmidData()
        }
        guard let header = matches("MThd", at: start) ? start : find("MThd", from: start, to: min(end, start + 1024))
        else {
            throw .notMIDI(what: FileKind.describe(bytes))
        }
        if header != start {
            try report(
                .dataBeforeHeader, track: nil, at: start, "\(header - start) bytes before the MThd header, skipped")
        }
        guard header + 14 <= end else {
            try report(.truncatedEvent, track: nil, at: header, "the file ends inside the MThd header")
            let empty = MIDIFile()
            return Chunks(format: empty.format, division: empty.division, tracks: [], isRMID: isRMID)
        }

        let headerLength = u32(header + 4)
        var format = MIDIFile.Format(rawValue: u16(header + 8))
        if format == nil {
            try report(
                .unknownFormat, track: nil, at: header + 8,
                "format \(u16(header + 8)) is not 0, 1 or 2; read as format 1")
            format = .multiTrack
        }
        let declaredTracks = u16(header + 10)
        let division = try readDivision(at: header + 12)

        var position = header + 8 + headerLength
        if headerLength != 6 {
            try report(.invalidHeaderLength, track: nil, at: header + 4, "MThd length is \(headerLength), expected 6")
            if !(position > header && looksLikeChunkID(at: position)) {
                position = find("MTrk", from: header + 14, to: end) ?? end
            }
        }

        var tracks: [Sink] = []
        if threads > 1 { readTracksAtOnce(&tracks, &position, end: end) }
        while position + 8 <= end {
            if matches("MTrk", at: position) {
                let (track, next) = try readTrack(index: tracks.count, chunk: position, fileEnd: end, into: Sink.self)
                tracks.append(track)
                position = next
            } else if looksLikeChunkID(at: position) {
                let id = String(decoding: bytes[position..<position + 4], as: UTF8.self)
                let length = u32(position + 4)
                try report(
                    .alienChunk, track: nil, at: position, "chunk '\(id)' (\(length) bytes) is not a track; skipped")
                position += 8 + length
            } else if let next = find("MTrk", from: position, to: end) {
                try report(
                    .extraBytesAtEnd, track: nil, at: position,
                    "\(next - position) unrecognized bytes before the next track, skipped")
                position = next
            } else {
                break
            }
        }
        if position < end {
            try report(
                .extraBytesAtEnd, track: nil, at: position, "\(end - position) bytes after the last chunk, ignored")
        }
        if tracks.count != declaredTracks {
            try report(
                .trackCountMismatch, track: nil, at: header + 10,
                "the header declares \(declaredTracks) tracks, the file has \(tracks.count)")
        }
        if format == .singleTrack && tracks.count > 1 {
            try report(
                .singleTrackFormatWithSeveralTracks, track: nil, at: header + 8,
                "format 0 file with \(tracks.count) tracks")
        }
        return Chunks(format: format ?? .multiTrack, division: division, tracks: tracks, isRMID: isRMID)
    }

    /// The SMF inside a RIFF RMID file: the `data` chunk's contents.
    mutating func rmidData() throws(MIDIFileError) -> (Int, Int) {
        var position = 12
        while position + 8 <= bytes.count {
            let length =
                Int(bytes[position + 4]) | Int(bytes[position + 5]) << 8 | Int(bytes[position + 6]) << 16 | Int(
                    bytes[position + 7]) << 24
            if matches("data", at: position) {
                let end = position + 8 + length
                if end > bytes.count {
                    try report(
                        .trackLengthTooLong, track: nil, at: position + 4,
                        "RMID data chunk declares \(length) bytes, \(bytes.count - position - 8) remain")
                }
                return (position + 8, min(end, bytes.count))
            }
            position += 8 + length + (length & 1)
        }
        if let header = find("MThd", from: 12, to: bytes.count) { return (header, bytes.count) }
        throw .invalidRIFF("RMID file without a data chunk")
    }

    mutating func readDivision(at offset: Int) throws(MIDIFileError) -> MIDIFile.Division {
        let word = u16(offset)
        if word & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(word >> 8)))
            let ticks = word & 0xFF
            if ![24, 25, 29, 30].contains(fps) || ticks == 0 {
                try report(
                    .invalidDivision, track: nil, at: offset, "SMPTE division \(fps) fps × \(ticks) ticks is not valid")
            }
            return .smpte(framesPerSecond: fps, ticksPerFrame: max(ticks, 1))
        }
        if word == 0 {
            try report(.invalidDivision, track: nil, at: offset, "division of 0 ticks per quarter note; 480 assumed")
            return .ticksPerQuarterNote(480)
        }
        return .ticksPerQuarterNote(word)
    }
}

/// Names common kinds of files so that a rejected file is described, not just refused.
enum FileKind {
    static func describe(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count
                && zip(bytes[offset..<offset + prefix.count], prefix).allSatisfy { $0 == $1 }
        }
        let ascii = { (text: String) in Array(text.utf8) }
        if bytes.isEmpty { return "the file is empty" }
        if starts(ascii("RIFF")) {
            let form = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : "?"
            return form == "WAVE" ? "a RIFF WAVE audio file" : "a RIFF file of form '\(form)', not RMID"
        }
        if starts(ascii("PK"), at: 0) && starts([3, 4], at: 2) { return "a ZIP archive" }
        if starts(ascii("Rar!")) { return "a RAR archive" }
        if starts(ascii("GIF8")) { return "a GIF image" }
        if starts([0x89]) && starts(ascii("PNG"), at: 1) { return "a PNG image" }
        if starts(ascii("%PDF")) { return "a PDF document" }
        if starts(ascii("ID3")) || starts([0xFF, 0xFB]) || starts([0xFF, 0xF3]) || starts([0xFF, 0xFA]) {
            return "an MP3 audio file"
        }
        if starts(ascii("OggS")) { return "an Ogg file" }
        if starts(ascii("fLaC")) { return "a FLAC audio file" }
        if starts(ascii("XMF_")) { return "an XMF file" }
        if starts(ascii("SCRM"), at: 44) { return "a Scream Tracker 3 module" }
        if starts(ascii("M.K."), at: 1080) { return "a ProTracker module" }
        if starts(ascii("Extended Module:")) { return "a FastTracker 2 module" }
        let head = bytes.prefix(512)
        let lowered = String(decoding: head, as: UTF8.self).lowercased()
        if lowered.contains("<html") || lowered.contains("<!doctype") { return "an HTML page" }
        let printable = head.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (0x20..<0x7F).contains($0) || $0 >= 0x80 }
        if printable { return "a text file" }
        return "no MThd header in the first bytes"
    }
}
