/// Why an ALSA PCM device could not be used; each case names the device and ALSA's reason.
public enum ALSAPCMError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(device: String, reason: String)
    case unsupportedConfiguration(device: String, reason: String)
    case writeFailed(device: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let device, let reason): return "audio device '\(device)': cannot open: \(reason)"
        case .unsupportedConfiguration(let device, let reason): return "audio device '\(device)': \(reason)"
        case .writeFailed(let device, let reason): return "audio device '\(device)': write failed: \(reason)"
        }
    }
}
