/// The format of audio on a connection: 32-bit float, planar (non-interleaved), at a sample rate,
/// with one or two channels. Every node of an engine runs at the engine's sample rate.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    /// Frames per second, in Hz.
    public var sampleRate: Double
    /// The number of channels; nodes accept 1 or 2 by default (not checked here).
    public var channelCount: Int

    /// A format of `channelCount` channels at `sampleRate` Hz.
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
    /// Frames since the clock started: for an engine, since it was made or last reset; for an
    /// `EffectChain`, since it was made.
    public var sampleTime: Int64
    /// The clock's rate in Hz, for converting to seconds (comparisons ignore it).
    public var sampleRate: Double

    /// A time of `sampleTime` frames on a clock running at `sampleRate` Hz.
    public init(sampleTime: Int64, sampleRate: Double) {
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
    }

    /// The time in seconds: `sampleTime / sampleRate`.
    public var seconds: Double { Double(sampleTime) / sampleRate }

    public static func < (lhs: AudioTime, rhs: AudioTime) -> Bool { lhs.sampleTime < rhs.sampleTime }
}
