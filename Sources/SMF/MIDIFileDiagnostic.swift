/// Something the reader found wrong in a file and recovered from. The lenient reader collects
/// these and goes on; the strict reader throws the first one as `MIDIFileError.damaged`.
public struct MIDIFileDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// The kind of defect. The raw value is the case name, as `pianola info` prints it and as its
    /// JSON `kind` field holds it.
    public enum Kind: String, Hashable, Sendable, CaseIterable, Codable {
        /// Bytes before the `MThd` header (e.g. a MacBinary prefix), skipped.
        case dataBeforeHeader
        /// A header length other than 6; the extra bytes are skipped.
        case invalidHeaderLength
        /// A format word other than 0, 1 or 2; read as format 1.
        case unknownFormat
        /// A division of 0 ticks; 480 is assumed.
        case invalidDivision
        /// The header's track count differs from the number of `MTrk` chunks found.
        case trackCountMismatch
        /// A format 0 file with more than one track.
        case singleTrackFormatWithSeveralTracks
        /// A chunk that is neither `MThd` nor `MTrk`; skipped.
        case alienChunk
        /// A track chunk's length runs past the end of the file or into the next chunk.
        case trackLengthTooLong
        /// A track's events continue past its chunk's declared length.
        case trackLengthTooShort
        /// No End of Track event; one was added after the last event.
        case missingEndOfTrack
        /// Bytes between End of Track and the end of its chunk; ignored.
        case dataAfterEndOfTrack
        /// Bytes after the last chunk too short to be a chunk; ignored.
        case extraBytesAtEnd
        /// A data byte where a status byte was due, after a meta or SysEx event that ended running
        /// status; read with the running status in force before it.
        case runningStatusAfterMetaOrSysEx
        /// A data byte where a status byte was due and no running status exists; skipped.
        case dataWithoutRunningStatus
        /// F4, F5, F9 or FD inside a track: no message is defined; skipped.
        case undefinedStatus
        /// A system common or real-time message (F1-F3, F6, F8-FE) inside a track, which SMF
        /// does not allow; skipped with its data bytes.
        case illegalSystemMessage
        /// A channel message's data byte of 128 or more; clamped to 127.
        case invalidDataByte
        /// The file ends inside an event or a variable-length quantity; the track ends there.
        case truncatedEvent
        /// A variable-length quantity of more than four bytes.
        case invalidVariableLengthQuantity
        /// A delta time beyond 2^23 ticks, kept as it is.
        case hugeDeltaTime
        /// A meta event whose length does not fit its type; missing fields take defaults.
        case invalidMetaEventLength
        /// A meta event value out of range (key signature, SMPTE offset, time signature, tempo 0).
        case invalidMetaEventValue
    }

    /// The defect's category, for code that reacts to particular defects; `message` has the details.
    public var kind: Kind
    /// The track index (0-based among `MTrk` chunks), nil for file-level findings.
    public var track: Int?
    /// Byte offset in the file where the problem was found.
    public var offset: Int
    /// A readable account with the values involved (e.g. "MThd length is 8, expected 6"), without
    /// the track and offset, which `description` adds.
    public var message: String

    /// Makes a diagnostic from its parts (the reader makes them as it finds defects).
    public init(kind: Kind, track: Int?, offset: Int, message: String) {
        self.kind = kind
        self.track = track
        self.offset = offset
        self.message = message
    }

    public var description: String {
        let place = track.map { "track \($0), " } ?? ""
        return "\(place)byte \(offset): \(message)"
    }
}
