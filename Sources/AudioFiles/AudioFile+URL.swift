import PianolaSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AudioFile {
    /// Reads a whole file at a `file:` URL as interleaved floats.
    public static func read(from url: URL) throws(AudioFileError) -> Buffer {
        try read(from: url.localPath { AudioFileError.cannotOpen(path: $0, reason: URL.notAFileReason) })
    }

    /// Writes `buffer` to a `file:` URL, format chosen by extension (through a temporary name;
    /// `compression` for MP3, Opus and Ogg Vorbis).
    public static func write(
        _ buffer: Buffer, to url: URL, encoding: Encoding = .s16, compression: Compression = .automatic
    ) throws(AudioFileError) {
        try write(
            buffer, to: url.localPath { AudioFileError.cannotOpen(path: $0, reason: URL.notAFileReason) },
            encoding: encoding, compression: compression)
    }
}

extension AudioFileWriter {
    /// Opens a temporary file beside a `file:` URL; the format follows the URL's extension.
    public convenience init(
        url: URL, sampleRate: Double, channelCount: Int = 2, encoding: AudioFile.Encoding = .s16,
        expectedFrameCount: Int? = nil, compression: AudioFile.Compression = .automatic
    ) throws(AudioFileError) {
        try self.init(
            path: url.localPath { AudioFileError.cannotOpen(path: $0, reason: URL.notAFileReason) },
            sampleRate: sampleRate,
            channelCount: channelCount, encoding: encoding, expectedFrameCount: expectedFrameCount,
            compression: compression)
    }
}

extension AudioClip {
    /// Reads and decodes a whole audio file at a `file:` URL, off the caller's thread.
    public convenience init(contentsOf url: URL) async throws(AudioFileError) {
        try await self.init(
            contentsOf: url.localPath { AudioFileError.cannotOpen(path: $0, reason: URL.notAFileReason) })
    }
}
