/// Why a meter cannot measure audio of the layout asked for.
public enum MeterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `LoudnessMeter` measures 1 or 2 channels at 8 kHz … 384 kHz (whole hertz).
    case unsupportedLayout(channelCount: Int, sampleRate: Double)

    public var description: String {
        switch self {
        case .unsupportedLayout(let channels, let rate):
            return "loudness meter: unsupported audio format: \(channels) channels at \(rate) Hz cannot be measured"
        }
    }
}
