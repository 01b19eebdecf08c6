/// Why an ALSA PCM device could not be used; each case names the device and ALSA's reason.
public enum ALSAPCMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device could not be opened: no such device, or busy (another program is using it).
    case cannotOpen(device: String, reason: String)
    /// The device refused a setting (sample format, stereo, sample rate, period size or count), the
    /// configuration was out of range, or the output could not start (closed, no audio thread).
    case unsupportedConfiguration(device: String, reason: String)
    /// Playback failed for good and the stream stopped (the device was unplugged or stopped
    /// responding); reported by `ALSAOutput.failure`, not thrown.
    case writeFailed(device: String, reason: String)
    /// Capture failed for good and the stream stopped (the device was unplugged or stopped
    /// responding); reported by `AudioInputNode.failure`, not thrown.
    case readFailed(device: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let device, let reason): return "audio device '\(device)': cannot open: \(reason)"
        case .unsupportedConfiguration(let device, let reason): return "audio device '\(device)': \(reason)"
        case .writeFailed(let device, let reason): return "audio device '\(device)': write failed: \(reason)"
        case .readFailed(let device, let reason): return "audio device '\(device)': capture failed: \(reason)"
        }
    }
}
