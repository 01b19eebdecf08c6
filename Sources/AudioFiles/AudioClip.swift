import AudioGraph
import CSampleRate
import Synchronization

/// Decoded audio in memory, ready for an `AudioFilePlayerNode`: planar float samples at the
/// rate they were recorded at. Immutable and shareable: one clip can be scheduled on many players
/// and many times.
///
/// Load a file with `try await AudioClip(contentsOf:)` (libsndfile: WAV, FLAC, Ogg Vorbis, AIFF,
/// MP3 and the other formats it reads), or wrap samples you made. A player whose engine runs at
/// another rate converts the clip once with libsamplerate (band-limited sinc interpolation) and
/// keeps the conversion with the clip, so scheduling it again costs nothing.
///
/// ```swift
/// let loop = try await AudioClip(contentsOf: "drums.wav")
/// player.schedule(loop, options: .loops)
/// player.play()
/// ```
public final class AudioClip: @unchecked Sendable {
    /// Frames per second of the samples.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// Frames per channel.
    public let frameCount: Int
    /// Where the clip came from (a path, or a name given to samples), for messages.
    public let name: String
    /// Planar: channel `c` starts at `storage + c * frameCount`. Never written after `init`.
    let storage: RealTimeBuffer<Float>
    private let conversions = Mutex<[ConversionKey: AudioClip]>([:])

    /// The clip's duration in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }

    /// Wraps planar samples: one array per channel (1 or 2 channels, all the same length).
    public init(channels: [[Float]], sampleRate: Double, name: String = "samples") throws(AudioFileError) {
        guard (1...2).contains(channels.count) else {
            throw .unsupportedFormat(
                path: name, reason: "\(channels.count) channels: the player plays mono and stereo audio")
        }
        guard sampleRate >= 1_000, sampleRate <= 768_000 else {
            throw .unsupportedFormat(path: name, reason: "sample rate \(sampleRate) Hz is outside 1 000 … 768 000")
        }
        let frames = channels[0].count
        guard channels.allSatisfy({ $0.count == frames }) else {
            throw .unsupportedFormat(path: name, reason: "the channels have different lengths")
        }
        self.sampleRate = sampleRate
        self.channelCount = channels.count
        self.frameCount = frames
        self.name = name
        storage = RealTimeBuffer(capacity: max(1, frames * channels.count))
        for (index, channel) in channels.enumerated() where frames > 0 {
            channel.withUnsafeBufferPointer {
                (storage.base + index * frames).update(from: $0.baseAddress!, count: frames)
            }
        }
    }

    /// Wraps an interleaved buffer (as `AudioFile.read(from:)` returns it).
    public convenience init(_ buffer: AudioFile.Buffer, name: String = "samples") throws(AudioFileError) {
        let frames = buffer.frameCount
        let channels = buffer.channelCount
        guard (1...2).contains(channels) else {
            throw .unsupportedFormat(path: name, reason: "\(channels) channels: the player plays mono and stereo files")
        }
        var planar = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        for frame in 0..<frames {
            for channel in 0..<channels { planar[channel][frame] = buffer.samples[frame * channels + channel] }
        }
        try self.init(channels: planar, sampleRate: buffer.sampleRate, name: name)
    }

    /// Reads and decodes a whole audio file, off the caller's thread.
    public convenience init(contentsOf path: String) async throws(AudioFileError) {
        let result = await Task.detached { () -> Result<AudioFile.Buffer, AudioFileError> in
            do throws(AudioFileError) { return .success(try AudioFile.read(from: path)) } catch {
                return .failure(error)
            }
        }.value
        try self.init(result.get(), name: path)
    }

    /// The samples of `channel` (0 or 1; a mono clip's channel 1 is its channel 0).
    public func samples(channel: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: channelPointer(channel), count: frameCount))
    }

    @inline(__always)
    func channelPointer(_ channel: Int) -> UnsafeMutablePointer<Float> {
        storage.base + min(channel, channelCount - 1) * frameCount
    }

    /// How finely a clip is converted to another sample rate (libsamplerate's sinc converters).
    public enum ConversionQuality: String, Sendable, CaseIterable {
        /// 97 dB signal-to-noise, 90 % of the band kept: the default.
        case medium
        /// 97 dB, 97 % of the band (slower).
        case best
        /// 97 dB, 80 % of the band (fastest).
        case fastest

        var converter: Int32 {
            switch self {
            case .best: return Int32(SRC_SINC_BEST_QUALITY)
            case .medium: return Int32(SRC_SINC_MEDIUM_QUALITY)
            case .fastest: return Int32(SRC_SINC_FASTEST)
            }
        }
    }

    private struct ConversionKey: Hashable {
        var rate: Double
        var quality: ConversionQuality
    }

    /// The clip at `sampleRate` (itself when the rates match). Converted once per rate and
    /// quality and kept; thread-safe.
    public func converted(
        toSampleRate rate: Double, quality: ConversionQuality = .medium
    ) throws(AudioFileError)
        -> AudioClip
    {
        if rate == sampleRate { return self }
        let key = ConversionKey(rate: rate, quality: quality)
        if let cached = conversions.withLock({ $0[key] }) { return cached }
        let ratio = rate / sampleRate
        guard src_is_valid_ratio(ratio) != 0 else {
            throw .unsupportedFormat(
                path: name, reason: "cannot convert \(Int(sampleRate)) Hz to \(Int(rate)) Hz (ratio beyond 256)")
        }
        let outputCapacity = Int((Double(frameCount) * ratio).rounded(.up)) + 16
        var input = [Float](repeating: 0, count: frameCount * channelCount)
        for frame in 0..<frameCount {
            for channel in 0..<channelCount { input[frame * channelCount + channel] = channelPointer(channel)[frame] }
        }
        let (status, output, produced) = AudioFile.Buffer.convert(
            input, frames: frameCount, channels: channelCount, ratio: ratio, converter: quality.converter,
            capacity: outputCapacity)
        guard status == 0 else {
            throw .readFailed(
                path: name, reason: "sample-rate conversion failed: " + String(cString: src_strerror(status)))
        }
        var planar = [[Float]](repeating: [Float](repeating: 0, count: produced), count: channelCount)
        for frame in 0..<produced {
            for channel in 0..<channelCount { planar[channel][frame] = output[frame * channelCount + channel] }
        }
        let clip = try AudioClip(channels: planar, sampleRate: rate, name: name)
        conversions.withLock { $0[key] = clip }
        return clip
    }
}
