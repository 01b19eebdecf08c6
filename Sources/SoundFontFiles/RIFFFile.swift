#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open SoundFont file, read with `pread` at offsets: nothing is read that is not asked for.
struct RIFFFile: Sendable {
    let path: String
    let descriptor: Int32
    let size: Int
    /// The most bytes of preset data read (FluidR3_GM's is 0.3 MB; a larger one is refused).
    static let presetDataLimit = 64 << 20

    init(path: String) throws(SoundFontReadError) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw SoundFontReadError(path: path, problem: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(descriptor)
            throw SoundFontReadError(path: path, problem: "not a regular file")
        }
        self.descriptor = descriptor
        size = Int(info.st_size)
    }

    func close() { _ = Glibc.close(descriptor) }

    /// The error for `problem`, its control characters (from names in the file) shown as "?":
    /// the message stays one printable line.
    func failure(_ problem: String) -> SoundFontReadError {
        SoundFontReadError(path: path, problem: printable(problem))
    }

    /// `count` bytes at `offset`, all of them or an error.
    func read(_ count: Int, at offset: Int) throws(SoundFontReadError) -> [UInt8] {
        guard count >= 0, offset >= 0, offset + count <= size else {
            throw failure("\(count) bytes at byte \(offset) lie past the end of the file (\(size) bytes)")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw failure("the file could not be read at byte \(offset + done)") }
            done += got
        }
        return bytes
    }

    /// Where the parts the voice engine needs lie.
    struct Structure {
        var majorVersion = 0
        var name = ""
        var smpl: (offset: Int, size: Int) = (0, 0)
        var sm24: (offset: Int, size: Int)?
        var pdta: [String: (offset: Int, size: Int)] = [:]
    }

    /// The RIFF header, the three lists and their chunks.
    func structure() throws(SoundFontReadError) -> Structure {
        guard size >= 12 else { throw failure("the file is \(size) bytes long, too short for a RIFF header") }
        let header = try read(12, at: 0)
        guard header.fourCC(at: 0) == "RIFF", header.fourCC(at: 8) == "sfbk" else {
            throw failure("no 'RIFF' … 'sfbk' header: not a SoundFont")
        }
        let end = min(size, 8 + Int(header.u32(at: 4)))
        var lists: [String: (offset: Int, size: Int)] = [:]
        var offset = 12
        while offset + 12 <= end {
            let chunk = try read(12, at: offset)
            let chunkSize = Int(chunk.u32(at: 4))
            if chunk.fourCC(at: 0) == "LIST" {
                let type = chunk.fourCC(at: 8)
                guard offset + 8 + chunkSize <= size else {
                    throw failure(
                        "the '\(type)' list at byte \(offset) runs past the end of the file "
                            + "(\(offset + 8 + chunkSize - size) bytes missing): the file is cut short")
                }
                lists[type] = (offset + 12, max(0, chunkSize - 4))
            }
            offset += 8 + chunkSize  // no pad byte skipped: FluidSynth skips none either
        }
        guard let info = lists["INFO"] else { throw failure("the 'INFO' list is missing") }
        guard let sdta = lists["sdta"] else { throw failure("no sample data: the 'sdta' list is missing") }
        guard let pdta = lists["pdta"] else { throw failure("no preset data: the 'pdta' list is missing") }
        var structure = Structure()
        let infoChunks = try chunks(in: info)
        if let ifil = infoChunks["ifil"], ifil.size >= 4 {
            structure.majorVersion = Int(try read(2, at: ifil.offset).u16(at: 0))
        }
        guard structure.majorVersion == 2 || structure.majorVersion == 3 else {
            throw failure("version \(structure.majorVersion) in 'ifil': only SoundFont 2 and 3 are read")
        }
        if let inam = infoChunks["INAM"], inam.size <= 256 {
            structure.name = String(decoding: try read(inam.size, at: inam.offset).prefix { $0 != 0 }, as: UTF8.self)
        }
        let sampleChunks = try chunks(in: sdta)
        structure.smpl = sampleChunks["smpl"] ?? (sdta.offset, 0)
        if let sm24 = sampleChunks["sm24"], structure.majorVersion == 2 { structure.sm24 = sm24 }
        structure.pdta = try chunks(in: pdta)
        return structure
    }

    /// The chunks of a list, by name (the first of each name), each within the list.
    private func chunks(
        in list: (offset: Int, size: Int)
    ) throws(SoundFontReadError) -> [String: (
        offset: Int, size: Int
    )] {
        var found: [String: (offset: Int, size: Int)] = [:]
        var offset = list.offset
        let end = list.offset + list.size
        while offset + 8 <= end {
            let header = try read(8, at: offset)
            let name = header.fourCC(at: 0)
            let chunkSize = Int(header.u32(at: 4))
            guard offset + 8 + chunkSize <= end else {
                throw failure("the '\(name)' chunk at byte \(offset) runs past the end of its list")
            }
            if found[name] == nil { found[name] = (offset + 8, chunkSize) }
            offset += 8 + chunkSize  // no pad byte skipped: FluidSynth skips none either
        }
        return found
    }
}

extension [UInt8] {
    func fourCC(at offset: Int) -> String {
        String(decoding: self[offset..<(offset + 4)].map { (32...126).contains($0) ? $0 : 63 }, as: UTF8.self)
    }
    func u16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    func u32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
            | UInt32(self[offset + 3]) << 24
    }
    func name(at offset: Int) -> String {
        let bytes = self[offset..<(offset + 20)].prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `text` with every control character as "?": a name from a file, fit for a one-line message.
func printable(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? "?" : $0 }))
}
