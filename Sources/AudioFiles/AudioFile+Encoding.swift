import CSndFile

extension AudioFile {
    /// The encoding of the samples in the file at `path`, as close as `Encoding` comes: 8- and
    /// 16-bit integers `s16`, 24-bit `s24`, 32-bit integers and floats `f32` (which holds their
    /// resolution); nil for lossy formats (Ogg Vorbis, Opus, MP3) and files that cannot be opened.
    public static func encoding(ofFileAt path: String) -> Encoding? {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
        sf_close(file)
        switch info.format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16): return .s16
        case Int32(SF_FORMAT_PCM_24): return .s24
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT), Int32(SF_FORMAT_DOUBLE): return .f32
        default: return nil
        }
    }
}

extension AudioFile {
    /// The libsndfile in use, as it names itself ("libsndfile-1.2.0").
    public static var libraryVersion: String { String(cString: sf_version_string()) }
}
