#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checks a path before FluidSynth sees it, so a user gets "not found" or "this is a WAV file"
/// instead of a generic load failure.
enum SoundFontFile {
    /// Refuses what is not a readable SoundFont with its first problem; returns warnings about
    /// what loads but plays wrong (samples cut short).
    @discardableResult
    static func validate(path: String) throws(SoundFontError) -> [String] {
        guard let file = fopen(path, "rb") else {
            if errno == ENOENT || errno == ENOTDIR { throw SoundFontError.notFound(path: path) }
            throw SoundFontError.notASoundFont(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 12)
        let count = fread(&header, 1, 12, file)
        if count == 0 {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                throw SoundFontError.notASoundFont(path: path, reason: "it is a directory")
            }
            throw SoundFontError.notASoundFont(path: path, reason: "the file is empty")
        }
        let riff = header.count >= 4 ? String(decoding: header[0..<4], as: UTF8.self) : ""
        let form = count >= 12 ? String(decoding: header[8..<12], as: UTF8.self) : ""
        if riff == "RIFF" && form == "sfbk" {
            var info = stat()
            let size = fstat(fileno(file), &info) == 0 ? Int(info.st_size) : 0
            do { return try SoundFontStructure(checking: file, fileSize: size).warnings } catch {
                throw SoundFontError.notASoundFont(path: path, reason: error.reason)
            }
        }
        throw SoundFontError.notASoundFont(path: path, reason: describe(riff: riff, form: form, header: header))
    }

    /// Whether the font's samples are compressed (SoundFont 3: its `ifil` version is 3 or more);
    /// false for a file that is not a sound SoundFont.
    static func isCompressed(path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var info = stat()
        guard fstat(fileno(file), &info) == 0,
            let structure = try? SoundFontStructure(checking: file, fileSize: Int(info.st_size))
        else { return false }
        return structure.majorVersion >= 3
    }

    private static func describe(riff: String, form: String, header: [UInt8]) -> String {
        if riff == "RIFF" {
            switch form {
            case "WAVE": return "it is a WAV audio file"
            case "RMID": return "it is a RIFF MIDI file"
            case "DLS ": return "it is a DLS bank, which FluidSynth cannot read"
            default:
                // The form is four bytes of the file: shown as text only when it is printable.
                let printable = form.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }
                let shown =
                    printable
                    ? "'\(form)'"
                    : header[8..<min(12, header.count)].map { String($0, radix: 16, uppercase: true) }.joined(
                        separator: " ")
                return "a RIFF file of form \(shown), expected 'sfbk'"
            }
        }
        if riff == "MThd" { return "it is a Standard MIDI File" }
        if riff == "fLaC" { return "it is a FLAC audio file" }
        if riff == "OggS" { return "it is an Ogg file" }
        return "no RIFF 'sfbk' header"
    }
}
