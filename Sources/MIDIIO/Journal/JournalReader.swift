/// Reads a recovery journal's octets within bounds: every overrun is a `malformedJournal` error
/// that says what was cut short, never a trap.
struct JournalReader {
    let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position >= bytes.endIndex }

    static func malformed(_ reason: String) -> RTPMIDIPacketError { .malformedJournal(reason) }

    mutating func u8() throws(RTPMIDIPacketError) -> UInt8 {
        guard position < bytes.endIndex else { throw Self.malformed("it ends inside a chapter") }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next `count` octets, indexed from 0 (a view of the journal: nothing is copied).
    mutating func bytes(_ count: Int) throws(RTPMIDIPacketError) -> Octets {
        guard count >= 0, position + count <= bytes.endIndex else { throw Self.malformed("it ends inside a chapter") }
        defer { position += count }
        return Octets(slice: bytes[position..<(position + count)])
    }

    /// A few octets of the journal, indexed from 0.
    struct Octets {
        let slice: ArraySlice<UInt8>

        subscript(index: Int) -> UInt8 { slice[slice.startIndex + index] }

        /// The octets as an array of their own.
        var array: [UInt8] { Array(slice) }
    }

    /// A reader of the next `count` octets alone (a structure of that LENGTH), stepping over them.
    mutating func sub(count: Int, what: String) throws(RTPMIDIPacketError) -> JournalReader {
        guard position + count <= bytes.endIndex else {
            throw Self.malformed(
                "a \(what) of \(count) octets runs past the journal (\(bytes.endIndex - position) left)")
        }
        defer { position += count }
        return JournalReader(bytes[position..<(position + count)])
    }

    /// A structure whose first two octets end in a 10-bit LENGTH counting the whole structure
    /// (chapter M, the system journal): its first octet (the flags) and a reader of the rest.
    mutating func lengthPrefixed(_ what: String) throws(RTPMIDIPacketError) -> (flags: UInt8, body: JournalReader) {
        let header = try bytes(2)
        let length = Int(header[0] & 0x03) << 8 | Int(header[1])
        guard length >= 2 else { throw Self.malformed("a \(what) of \(length) octets") }
        return (header[0], try sub(count: length - 2, what: what))
    }
}
