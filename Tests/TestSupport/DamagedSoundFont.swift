import Foundation

/// A SoundFont's bytes with defects put in on purpose, for the tests of damaged fonts (the
/// project's own font, damaged in code: no broken fixture files).
public struct DamagedSoundFont {
    public var bytes: [UInt8]

    /// The font at `path`, undamaged so far.
    public init(contentsOf path: String) {
        bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }

    /// Where each chunk (a list by its type) within `start..<end` starts, and its size.
    public func chunks(from start: Int = 12, to end: Int? = nil) -> [String: (offset: Int, size: Int)] {
        var found: [String: (offset: Int, size: Int)] = [:]
        var offset = start
        while offset + 8 <= (end ?? bytes.count) {
            var id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            if id == "LIST" { id = String(decoding: bytes[offset + 8..<offset + 12], as: UTF8.self) }
            found[id] = (offset, size)
            offset += 8 + size + (size & 1)
        }
        return found
    }

    /// The chunks of the list of `type` ("pdta", "sdta").
    public func chunks(inList type: String) -> [String: (offset: Int, size: Int)] {
        guard let list = chunks()[type] else { return [:] }
        return chunks(from: list.offset + 12, to: list.offset + 8 + list.size)
    }

    /// Writes a little-endian 32-bit value.
    public mutating func put32(_ value: Int, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// Makes the presets' bag indices go down, which FluidSynth's loader refuses (after the chunk
    /// structure, which stays whole, passed Pianola's own check).
    public mutating func scrambleBagIndices() {
        guard let headers = chunks(inList: "pdta")["phdr"] else { return }
        let presets = headers.size / 38
        for index in 0..<presets - 1 {
            let value = (presets - index) * 3
            bytes[headers.offset + 8 + index * 38 + 24] = UInt8(value & 0xFF)
            bytes[headers.offset + 8 + index * 38 + 25] = UInt8(value >> 8)
        }
    }

    /// Gives the sample data list an odd size with no pad byte after it, and the preset data list a
    /// size whose low byte is a letter, as in Debian's MuseScore_General_Lite.sf3: the bytes where
    /// RIFF's padding rule puts the next chunk then read as a name ("ISTZ"), though the list starts
    /// one byte earlier. FluidSynth reads such a font (it never skips pad bytes); both additions are
    /// chunks it ignores.
    public mutating func dropPadByteAfterSampleData() {
        let sdta = chunks()["sdta"]!
        let odd = Array("zzzz".utf8) + [1, 0, 0, 0, 0]  // a 1-byte chunk, unpadded
        bytes.insert(contentsOf: odd, at: sdta.offset + 8 + sdta.size)
        put32(sdta.size + odd.count, at: sdta.offset + 4)
        let pdta = sdta.offset + 8 + sdta.size + odd.count
        let size = Int(bytes[pdta + 4]) | Int(bytes[pdta + 5]) << 8 | Int(bytes[pdta + 6]) << 16
        let filler = (0x5A - (size + 8) & 0xFF + 256) % 256  // the list's new size ends in 0x5A, "Z"
        let junk = Array("zzzz".utf8) + [UInt8(filler), 0, 0, 0] + [UInt8](repeating: 0, count: filler)
        bytes.insert(contentsOf: junk, at: pdta + 8 + size)
        put32(size + junk.count, at: pdta + 4)
        put32(bytes.count - 8, at: 4)
    }

    /// Writes the bytes to `name` in `folder` (a test's `withTemporaryFolder`); returns the path.
    public func write(_ name: String, in folder: String) throws -> String {
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
