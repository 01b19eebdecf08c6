#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The chunk structure of a SoundFont 2 (or 3) file, checked before FluidSynth reads it, so that a
/// damaged font is refused with its first real problem (a chunk that runs past the end, preset
/// data missing or of the wrong size) instead of FluidSynth's log and the DLS loader's noise, and a
/// font whose sample data is cut short (it would play silence) is loaded with a warning.
///
/// Reads the headers only (a few kilobytes), never the sample data.
struct SoundFontStructure {
    /// Problems that do not stop the font loading.
    private(set) var warnings: [String] = []
    /// The major version of the INFO list's `ifil` chunk: 2 for SoundFont 2, 3 for SoundFont 3
    /// (compressed samples); 0 when the chunk is missing.
    private(set) var majorVersion = 0

    /// The preset data's chunks in file order, with each record's size in bytes (SoundFont 2.04, 7.2).
    static let presetChunks: [(name: String, recordSize: Int)] = [
        ("phdr", 38), ("pbag", 4), ("pmod", 10), ("pgen", 4), ("inst", 22), ("ibag", 4), ("imod", 10), ("igen", 4),
        ("shdr", 46),
    ]

    private let file: UnsafeMutablePointer<FILE>
    private let fileSize: Int

    /// Checks the open file (whose first 12 bytes are `RIFF`, a size and `sfbk`); the error is the
    /// first problem, in words.
    init(checking file: UnsafeMutablePointer<FILE>, fileSize: Int) throws(Failure) {
        self.file = file
        self.fileSize = fileSize
        let declared = 8 + Int(try u32(at: 4))
        let end = min(declared, fileSize)
        var lists: [String: (start: Int, size: Int)] = [:]
        var offset = 12
        while offset + 8 <= end {
            let id = try fourCC(at: offset)
            let size = Int(try u32(at: offset + 4))
            if id == "LIST", offset + 12 <= fileSize {
                let type = try fourCC(at: offset + 8)
                lists[type] = (offset + 12, max(0, min(size - 4, fileSize - offset - 12)))
                if offset + 8 + size > fileSize && type != "sdta" {
                    throw Failure(
                        "the '\(type)' list at byte \(offset) runs past the end of the file "
                            + "(\(offset + 8 + size - fileSize) bytes missing): the file is cut short")
                }
            }
            offset = next(after: offset, size: size)
        }
        guard let presets = lists["pdta"] else {
            let cut = declared > fileSize ? " (the file is cut short: \(declared - fileSize) bytes missing)" : ""
            throw Failure("no preset data: the 'pdta' list is missing\(cut)")
        }
        guard let samples = lists["sdta"] else { throw Failure("no sample data: the 'sdta' list is missing") }
        if let info = lists["INFO"], let ifil = try subchunks(in: info)["ifil"], ifil.size >= 4 {
            majorVersion = Int(try u16(at: ifil.start))
        }
        let chunks = try subchunks(in: presets)
        for (name, recordSize) in Self.presetChunks {
            guard let chunk = chunks[name] else { throw Failure("the preset data has no '\(name)' chunk") }
            guard chunk.size % recordSize == 0 else {
                throw Failure(
                    "the '\(name)' chunk holds \(chunk.size) bytes, not a whole number of \(recordSize)-byte records")
            }
        }
        if let headers = chunks["phdr"], headers.size / 38 < 2 { throw Failure("the font has no presets") }
        try checkSampleBounds(headers: chunks["shdr"]!, sampleData: subchunks(in: samples)["smpl"], sdta: samples)
    }

    /// Warns when samples reach past the end of the sample data (a truncated file plays them silent).
    private mutating func checkSampleBounds(
        headers: (start: Int, size: Int), sampleData: (start: Int, size: Int)?, sdta: (start: Int, size: Int)
    ) throws(Failure) {
        let count = headers.size / 46 - 1  // the last record is the terminal "EOS"
        guard count > 0 else { return }
        let bytes = sampleData?.size ?? 0
        var cut = 0
        for index in 0..<count {
            let record = headers.start + index * 46
            let end = Int(try u32(at: record + 24))
            let type = Int(try u16(at: record + 44))
            if type & 0x8000 != 0 { continue }  // ROM samples live elsewhere
            // SoundFont 3 compressed samples count bytes of the sample data; others count 16-bit points.
            let available = type & 0x10 != 0 ? bytes : bytes / 2
            if end > available { cut += 1 }
        }
        if cut > 0 {
            warnings.append(
                "the sample data is cut short (\(bytes) bytes): \(cut) of \(count) samples reach past its end "
                    + "and play silence")
        }
    }

    /// The chunks of a list: name → where the chunk's data starts and its size (cut to the file).
    private func subchunks(in list: (start: Int, size: Int)) throws(Failure) -> [String: (start: Int, size: Int)] {
        var chunks: [String: (start: Int, size: Int)] = [:]
        var offset = list.start
        let end = list.start + list.size
        while offset + 8 <= end {
            let id = try fourCC(at: offset)
            let size = Int(try u32(at: offset + 4))
            if chunks[id] == nil { chunks[id] = (offset + 8, max(0, min(size, fileSize - offset - 8))) }
            offset = next(after: offset, size: size)
        }
        return chunks
    }

    /// Where the chunk after one of `size` bytes at `offset` starts. RIFF pads an odd-sized chunk to
    /// an even length, but some fonts (SoundFont 3 files among them, such as Debian's
    /// MuseScore_General_Lite.sf3) leave the pad byte out, and FluidSynth reads them: the next chunk
    /// is where a chunk header is found, a name followed by a size that fits in the file. The padded
    /// place comes first, as RIFF says; the unpadded one when only it holds such a header.
    private func next(after offset: Int, size: Int) -> Int {
        let unpadded = offset + 8 + size
        guard size & 1 == 1 else { return unpadded }
        let holdsHeader = { (at: Int) -> Bool in
            guard let header = try? bytes(at: at, count: 8) else { return false }
            // Chunk names are letters, digits and spaces ("LIST", "smpl", "sm24").
            let named = header[0..<4].allSatisfy {
                $0 == 0x20 || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0 & 0xDF)
            }
            let length = Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16 | Int(header[7]) << 24
            return named && at + 8 + length <= fileSize + 1
        }
        return !holdsHeader(unpadded + 1) && holdsHeader(unpadded) ? unpadded : unpadded + 1
    }

    private func bytes(at offset: Int, count: Int) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        guard fseeko(file, off_t(offset), SEEK_SET) == 0, fread(&buffer, 1, count, file) == count else {
            throw Failure("the file is cut short at byte \(offset)")
        }
        return buffer
    }

    private func u32(at offset: Int) throws(Failure) -> UInt32 {
        let b = try bytes(at: offset, count: 4)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    private func u16(at offset: Int) throws(Failure) -> UInt16 {
        let b = try bytes(at: offset, count: 2)
        return UInt16(b[0]) | UInt16(b[1]) << 8
    }

    /// A chunk name, with bytes outside printable ASCII shown as `?` (never raw control bytes).
    private func fourCC(at offset: Int) throws(Failure) -> String {
        String(decoding: try bytes(at: offset, count: 4).map { (32...126).contains($0) ? $0 : 63 }, as: UTF8.self)
    }

    /// Why the structure is refused.
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
