/// Little-endian RIFF byte builder.
struct RIFFWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes.append(UInt8(value & 0xFF)); bytes.append(UInt8(value >> 8)) }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
    mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }
    mutating func raw(_ data: [UInt8]) { bytes.append(contentsOf: data) }
    mutating func ascii(_ text: String) { bytes.append(contentsOf: Array(text.utf8)) }

    /// A zero-terminated string padded to an even length, as INFO sub-chunks require.
    mutating func zstr(_ text: String) {
        var data = Array(text.utf8.prefix(255))
        data.append(0)
        if data.count % 2 == 1 { data.append(0) }
        raw(data)
    }

    /// A fixed-length, zero-padded name field (presets, instruments, samples: 20 bytes).
    mutating func fixedString(_ text: String, length: Int) {
        var data = Array(text.utf8.prefix(length - 1))
        data.append(contentsOf: repeatElement(0, count: length - data.count))
        raw(data)
    }

    mutating func chunk(_ id: String, _ build: (inout RIFFWriter) -> Void) {
        var content = RIFFWriter()
        build(&content)
        raw(Self.chunkBytes(id, content.bytes))
    }

    mutating func list(_ type: String, _ content: [UInt8]) {
        raw(Self.chunkBytes("LIST", Array(type.utf8) + content))
    }

    static func chunkBytes(_ id: String, _ content: [UInt8]) -> [UInt8] {
        var out = RIFFWriter()
        out.ascii(id)
        out.u32(UInt32(content.count))
        out.raw(content)
        if content.count % 2 == 1 { out.u8(0) }
        return out.bytes
    }
}
