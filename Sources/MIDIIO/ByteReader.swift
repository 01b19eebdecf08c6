/// Big-endian reads with bounds checks that throw instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], from position: Int) {
        self.bytes = bytes
        self.position = position
    }

    mutating func u8() throws(RTPMIDIPacketError) -> UInt8 {
        guard position < bytes.count else { throw .tooShort(needed: position + 1, got: bytes.count) }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws(RTPMIDIPacketError) -> UInt16 {
        UInt16(try u8()) << 8 | UInt16(try u8())
    }

    mutating func u32() throws(RTPMIDIPacketError) -> UInt32 {
        UInt32(try u16()) << 16 | UInt32(try u16())
    }

    mutating func u64() throws(RTPMIDIPacketError) -> UInt64 {
        UInt64(try u32()) << 32 | UInt64(try u32())
    }

    mutating func skip(_ count: Int) throws(RTPMIDIPacketError) {
        guard count >= 0, position + count <= bytes.count else {
            throw .tooShort(needed: position + max(0, count), got: bytes.count)
        }
        position += count
    }

    /// The rest up to a NUL (or the end), as UTF-8 (invalid bytes replaced).
    mutating func nulTerminatedString() -> String {
        let rest = bytes[min(position, bytes.count)...]
        let end = rest.firstIndex(of: 0) ?? rest.endIndex
        position = min(bytes.count, end + 1)
        return String(decoding: rest[..<end], as: UTF8.self)
    }
}

/// A byte as two uppercase hex digits.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
}
