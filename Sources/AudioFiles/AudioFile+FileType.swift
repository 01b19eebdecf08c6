import CSndFile

extension AudioFile {
    /// The kinds of file Pianola writes, chosen by a path's extension. Any of them (and anything
    /// else libsndfile decodes) is read back by `AudioFile.read(from:)`.
    public enum FileType: String, Sendable, CaseIterable {
        /// `.wav`: RIFF WAVE (RF64 past 4 GiB, where `AudioFileWriter` is told how long it may grow).
        case wav
        /// `.flac`: FLAC, lossless (16- or 24-bit).
        case flac
        /// `.ogg` or `.oga`: Ogg Vorbis, lossy.
        case ogg
        /// `.opus`: Opus in Ogg, lossy. The encoder takes 8, 12, 16, 24 or 48 kHz: audio at
        /// another rate is converted as it is written (`fileSampleRate(for:)`), and a reader
        /// gets 48 kHz back from any file at more than 24 kHz.
        case opus
        /// `.mp3`: MPEG-1/2 Layer III through LAME, lossy, one or two channels at 8 to 48 kHz
        /// (audio at another rate is converted as it is written, `fileSampleRate(for:)`).
        case mp3
        /// `.aiff` or `.aif`: AIFF.
        case aiff
        /// `.raw`: headerless interleaved samples, little-endian (for pipelines).
        case raw

        /// The type a path's extension names (case does not matter).
        ///
        /// - Throws: `AudioFileError.unsupportedFormat` for any other extension.
        public init(path: String) throws(AudioFileError) {
            let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
            let name = path[slash...]
            let ext = name.lastIndex(of: ".").map { name[name.index(after: $0)...].lowercased() } ?? ""
            switch ext {
            case "wav": self = .wav
            case "flac": self = .flac
            case "ogg", "oga": self = .ogg
            case "opus": self = .opus
            case "mp3": self = .mp3
            case "aiff", "aif": self = .aiff
            case "raw": self = .raw
            default:
                throw .unsupportedFormat(
                    path: path, reason: "use a .wav, .flac, .ogg, .opus, .mp3, .aiff or .raw extension")
            }
        }

        /// Whether the file holds compressed audio that decodes to something close to, not equal
        /// to, what was written (Ogg Vorbis, Opus, MP3). Such files take no sample format
        /// (`AudioFile.Encoding`); `AudioFile.Compression` sets their size.
        public var isLossy: Bool { self == .ogg || self == .opus || self == .mp3 }

        /// The sample rates (Hz) the format holds, lowest first; nil where any rate goes.
        public var sampleRates: [Int]? {
            switch self {
            case .opus: return [8_000, 12_000, 16_000, 24_000, 48_000]
            case .mp3: return [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000]
            default: return nil
            }
        }

        /// The most channels a file holds (MP3: 2); nil where libsndfile sets no limit of its own.
        public var maximumChannelCount: Int? { self == .mp3 ? 2 : nil }

        /// The rate a file of this type is written at for audio at `rate`: `rate` itself where the
        /// format holds it, else the lowest rate it holds above `rate` (nothing above the audio's
        /// band is lost), else its highest (48 kHz for Opus and MP3). 44.1 kHz goes into an Opus
        /// file at 48 kHz, 96 kHz into an MP3 at 48 kHz.
        public func fileSampleRate(for rate: Double) -> Double {
            guard let rates = sampleRates, !rates.contains(where: { Double($0) == rate.rounded() }) else {
                return rate.rounded()
            }
            return Double(rates.first { Double($0) > rate } ?? rates[rates.count - 1])
        }

        /// The name people know it by ("WAV", "Ogg Vorbis", "MP3", …), for messages.
        public var displayName: String {
            switch self {
            case .wav: return "WAV"
            case .flac: return "FLAC"
            case .ogg: return "Ogg Vorbis"
            case .opus: return "Opus"
            case .mp3: return "MP3"
            case .aiff: return "AIFF"
            case .raw: return "raw"
            }
        }

        /// Notes in an Opus file converted from `rate` Hz that rate as its original one (as opusenc
        /// does: decoders such as opusdec give it back at that rate; libsndfile still reads 48 kHz).
        func recordOriginalRate(_ rate: Double, in file: OpaquePointer) {
            guard self == .opus, var original = Int32(exactly: rate.rounded()) else { return }
            sf_command(file, Int32(SFC_SET_ORIGINAL_SAMPLERATE), &original, Int32(MemoryLayout<Int32>.size))
        }

        /// libsndfile's major format.
        var majorFormat: Int32 {
            switch self {
            case .wav: return Int32(SF_FORMAT_WAV)
            case .flac: return Int32(SF_FORMAT_FLAC)
            case .ogg, .opus: return Int32(SF_FORMAT_OGG)
            case .mp3: return Int32(SF_FORMAT_MPEG)
            case .aiff: return Int32(SF_FORMAT_AIFF)
            case .raw: return Int32(SF_FORMAT_RAW) | Int32(SF_ENDIAN_LITTLE)
            }
        }

        /// libsndfile's subtype for samples in `encoding` (a lossy format has its codec's own).
        func subtype(_ encoding: Encoding) -> Int32 {
            switch self {
            case .ogg: return Int32(SF_FORMAT_VORBIS)
            case .opus: return Int32(SF_FORMAT_OPUS)
            case .mp3: return Int32(SF_FORMAT_MPEG_LAYER_III)
            default:
                switch encoding {
                case .s16: return Int32(SF_FORMAT_PCM_16)
                case .s24: return Int32(SF_FORMAT_PCM_24)
                case .f32: return self == .flac ? Int32(SF_FORMAT_PCM_24) : Int32(SF_FORMAT_FLOAT)
                }
            }
        }

        /// Checks, creating nothing, that audio of `channelCount` channels at `sampleRate` Hz can be
        /// written to a file of this type in `encoding`, compressed as `compression`, at the file
        /// rate `fileSampleRate(for:)` gives (what `AudioFileWriter` checks before it opens a file).
        ///
        /// - Throws: `AudioFileError.unsupportedFormat` naming `path`: s24 or f32 for MP3 or Opus, an
        ///   MP3 of more than two channels, a quality outside 0…1 or for a lossless type, a bit rate
        ///   the type's encoder does not take at that rate (or for Ogg Vorbis and lossless types).
        public func check(
            path: String, sampleRate: Double, channelCount: Int = 2, encoding: Encoding = .s16,
            compression: Compression = .automatic
        ) throws(AudioFileError) {
            if let problem = problem(
                encoding: encoding, channelCount: channelCount, fileRate: fileSampleRate(for: sampleRate),
                compression: compression)
            {
                throw .unsupportedFormat(path: path, reason: problem)
            }
        }

        /// Why `encoding`, `channelCount` channels at `fileRate` Hz and `compression` cannot go into
        /// a file of this type; nil if they can.
        func problem(
            encoding: Encoding, channelCount: Int, fileRate: Double, compression: Compression
        ) -> String? {
            if self == .opus || self == .mp3, encoding != .s16 {
                return "\(displayName) holds compressed audio, not \(encoding.rawValue) samples "
                    + "(leave the encoding at s16, the default; AudioFile.Compression sets the size)"
            }
            if let most = maximumChannelCount, channelCount > most {
                return "\(displayName) holds 1 or \(most) channels, not \(channelCount)"
            }
            if let rates = sampleRates, !rates.contains(where: { Double($0) == fileRate }) {
                return "\(displayName) holds "
                    + rates.map(String.init).joined(separator: ", ") + " Hz, not \(Int(fileRate))"
            }
            return compression.problem(for: self, fileRate: fileRate, channelCount: channelCount)
        }
    }

    /// How much a lossy file (MP3, Opus, Ogg Vorbis) is compressed: what libsndfile's
    /// `SFC_SET_COMPRESSION_LEVEL` and `SFC_SET_BITRATE_MODE` set. Lossless files take only
    /// `automatic`.
    public enum Compression: Sendable, Hashable {
        /// Each format's default: MP3 at variable bit rate, quality 0.8 (LAME's `-V 2`); Opus
        /// libopus's own bit rate (about 100 kbit/s for stereo); Ogg Vorbis libsndfile's quality
        /// 0.4.
        case automatic
        /// A quality from 0 (smallest) to 1 (best), libsndfile's compression level read upside
        /// down (1 − level). MP3: variable bit rate, LAME's `-V` 10 × (1 − quality) (1 is `-V 0`);
        /// Opus: a target of 6 + 250 × quality kbit/s per channel; Ogg Vorbis: Vorbis quality
        /// `quality` (oggenc's `-q` 10 × quality).
        case quality(Double)
        /// A bit rate in kbit/s. MP3: constant, one of LAME's rates for the file's rate (32…320 at
        /// 32 kHz and above, 8…160 at 16–24 kHz, 8…64 below); Opus: the encoder's target (its rate
        /// varies about it), 6…256 kbit/s per channel. Ogg Vorbis takes no bit rate.
        case bitRate(Int)

        /// The default quality of an MP3 (LAME's `-V 2`, about 190 kbit/s for music).
        public static let defaultMP3Quality = 0.8

        /// The bit rates (kbit/s) LAME writes at constant rate into an MP3 at `fileRate` Hz.
        public static func mp3BitRates(atSampleRate fileRate: Double) -> [Int] {
            if fileRate >= 32_000 { return [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] }
            if fileRate >= 16_000 { return [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160] }
            return [8, 16, 24, 32, 40, 48, 56, 64]
        }

        /// Why this compression does not fit `type` at `fileRate` with `channelCount` channels.
        func problem(for type: FileType, fileRate: Double, channelCount: Int) -> String? {
            switch self {
            case .automatic:
                return nil
            case .quality(let quality):
                guard type.isLossy else {
                    return "a quality applies to MP3, Opus and Ogg Vorbis files, not \(type.displayName)"
                }
                guard (0...1).contains(quality) else { return "a quality is from 0 to 1, not \(quality)" }
                return nil
            case .bitRate(let kbps):
                switch type {
                case .mp3:
                    let rates = Self.mp3BitRates(atSampleRate: fileRate)
                    guard rates.contains(kbps) else {
                        return "an MP3 at \(Int(fileRate)) Hz takes a bit rate of "
                            + rates.map(String.init).joined(separator: ", ") + " kbit/s, not \(kbps)"
                    }
                    return nil
                case .opus:
                    let range = (6 * channelCount)...(256 * channelCount)
                    guard range.contains(kbps) else {
                        return "an Opus file of \(channelCount) channels takes \(range.lowerBound)…"
                            + "\(range.upperBound) kbit/s (6…256 per channel), not \(kbps)"
                    }
                    return nil
                default:
                    return "a bit rate applies to MP3 and Opus files, not \(type.displayName)"
                }
            }
        }

        /// Sets the compression on a file libsndfile opened for writing (before any sample is
        /// written); false if libsndfile refused.
        func apply(to file: OpaquePointer, type: FileType, fileRate: Double, channelCount: Int) -> Bool {
            var level: Double
            var mode = Int32(SF_BITRATE_MODE_VARIABLE)
            switch (self, type) {
            case (.automatic, .mp3):
                level = 1 - Self.defaultMP3Quality
            case (.automatic, _):
                return true
            case (.quality(let quality), _):
                level = 1 - quality
            case (.bitRate(let kbps), .mp3):
                // libsndfile maps the level onto its version's range of rates linearly and
                // truncates: aim half a kbit/s above so that the truncation lands on `kbps`.
                let (top, bottom) = fileRate >= 32_000 ? (320.0, 32.0) : fileRate >= 16_000 ? (160.0, 8.0) : (64.0, 8.0)
                level = (top - Double(kbps) - 0.5) / (top - bottom)
                mode = Int32(SF_BITRATE_MODE_CONSTANT)
            case (.bitRate(let kbps), _):
                // Opus: (1 − level) × 250 000 + 6 000 bit/s per channel, truncated.
                let perChannel = Double(kbps) * 1_000 / Double(channelCount)
                level = 1 - (perChannel - 6_000 + 0.5) / 250_000
            }
            // LAME's VBR quality stops short of 10 (-V 9.999): quality 0 is that.
            level = min(max(level, 0), type == .mp3 && mode == Int32(SF_BITRATE_MODE_VARIABLE) ? 0.9999 : 1)
            guard sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size)) != 0
            else { return false }
            guard type == .mp3 else { return true }
            return sf_command(file, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size)) != 0
        }
    }
}
