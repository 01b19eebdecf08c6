/// The format of audio on a connection: 32-bit float, planar (non-interleaved), at a sample rate,
/// with one or two channels. Every node of an engine runs at the engine's sample rate.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Double
    public var channelCount: Int

    public init(sampleRate: Double, channelCount: Int) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// Stereo at `sampleRate`.
    public static func stereo(sampleRate: Double) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: 2)
    }

    public var description: String { "\(channelCount) ch @ \(sampleRate) Hz" }
}

/// A position on the engine's sample clock: frames rendered since the engine started.
public struct AudioTime: Hashable, Sendable, Comparable {
    public var sampleTime: Int64
    public var sampleRate: Double

    public init(sampleTime: Int64, sampleRate: Double) {
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
    }

    public var seconds: Double { Double(sampleTime) / sampleRate }

    public static func < (lhs: AudioTime, rhs: AudioTime) -> Bool { lhs.sampleTime < rhs.sampleTime }
}
