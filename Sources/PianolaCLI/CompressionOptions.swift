import ArgumentParser
import Pianola

/// `--quality` and `--bitrate`, where a command writes MP3, Opus or Ogg Vorbis files (`render`,
/// `process`, `record`).
struct CompressionOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "For .mp3, .opus and .ogg output, from 0 (smallest) to 1 (best). mp3: variable bit rate, LAME's -V 10×(1−q) (default 0.8: -V 2); opus: 6 + 250×q kbit/s per channel (default: libopus's, about 100 kbit/s stereo); ogg: Vorbis quality q (default 0.4).",
            valueName: "q"))
    var quality: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "For .mp3 and .opus output, kbit/s. mp3: constant, one of LAME's rates (32…320 at 32 kHz and above); opus: the target its variable rate keeps to, 6…256 per channel.",
            valueName: "kbps"))
    var bitrate: Int?

    func validate() throws {
        if quality != nil && bitrate != nil {
            throw ValidationError("--quality and --bitrate both set the size: give one")
        }
        if let quality, !(0...1).contains(quality) {
            throw ValidationError("--quality must be between 0 and 1, got \(quality)")
        }
        if let bitrate, bitrate <= 0 {
            throw ValidationError("--bitrate must be a positive number of kbit/s, got \(bitrate)")
        }
    }

    /// The compression asked for (the format's default without either option).
    var compression: AudioFile.Compression {
        if let quality { return .quality(quality) }
        if let bitrate { return .bitRate(bitrate) }
        return .automatic
    }

    /// Refuses, in the command line's words, options that do not fit the file at `path` (its type
    /// from the extension; nothing is checked for an extension of no type, which fails when
    /// written): --quality for a lossless file, --bitrate for other than MP3 and Opus, a sample
    /// `format` (given, or other than s16) for MP3 and Opus, and a bit rate the encoder does not
    /// take at `sampleRate` Hz, or `channelCount` channels the type cannot hold.
    func check(
        output path: String, sampleRate: Double?, channelCount: Int = 2, format: AudioFile.Encoding?
    ) throws {
        guard let type = try? AudioFile.FileType(path: path) else { return }
        let name = ".\(type.rawValue)"
        if quality != nil, !type.isLossy {
            throw ValidationError("--quality applies to .mp3, .opus and .ogg output, not \(name)")
        }
        if bitrate != nil, type != .mp3 && type != .opus {
            throw ValidationError(
                "--bitrate applies to .mp3 and .opus output, not \(name)"
                    + (type == .ogg ? " (set an Ogg Vorbis file's size with --quality)" : ""))
        }
        if let format, type == .mp3 || type == .opus {
            throw ValidationError(
                "--format \(format.rawValue) does not apply to \(name): \(type.displayName) holds compressed "
                    + "audio, not samples (set its size with --quality or --bitrate)")
        }
        guard let sampleRate else { return }
        do throws(AudioFileError) {
            try type.check(path: path, sampleRate: sampleRate, channelCount: channelCount)
        } catch {
            throw ValidationError(error.description)
        }
        if let bitrate {
            do throws(AudioFileError) {
                try type.check(
                    path: path, sampleRate: sampleRate, channelCount: channelCount, compression: .bitRate(bitrate))
            } catch {
                guard case .unsupportedFormat(_, let reason) = error else { throw ValidationError(error.description) }
                throw ValidationError("--bitrate \(bitrate): \(reason)")
            }
        }
    }
}
