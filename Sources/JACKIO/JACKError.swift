/// Why a JACK client could not be made or stopped working; each says what and what to do in one line.
public enum JACKError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No JACK library could be loaded (`libjack.so.0`, from JACK 2 or PipeWire's JACK library),
    /// with the loader's reason.
    case libraryUnavailable(String)
    /// No JACK server runs (under `server`'s name, when one was given).
    case serverUnavailable(server: String?)
    /// The server refused the client, with JACK's reason.
    case cannotOpen(client: String, reason: String)
    /// A port could not be registered or connected.
    case portFailed(String)
    /// A port name that matches no port, with the ports whose names are nearest.
    case unknownPort(String, nearMatches: [String])
    /// The server changed its sample rate while the client ran (the synthesizer plays at the old one).
    case sampleRateChanged(from: Int, to: Int)
    /// The server shut the client down while it ran (the server stopped or threw it out), with
    /// JACK's reason.
    case serverStopped(reason: String)

    public var description: String {
        switch self {
        case .libraryUnavailable(let reason): return reason
        case .serverUnavailable(let server):
            let name = server.map { " named '\($0)'" } ?? ""
            return "no JACK server\(name) is running: start one (`jackd -d alsa`, or `jackd -d dummy` "
                + "without a sound card), or under PipeWire run the program through `pw-jack`"
        case .cannotOpen(let client, let reason): return "JACK refused the client '\(client)': \(reason)"
        case .portFailed(let reason): return reason
        case .unknownPort(let name, let near):
            let hint = near.isEmpty ? "" : " (nearest: \(near.joined(separator: ", ")))"
            return "no JACK port '\(name)'\(hint)"
        case .sampleRateChanged(let old, let new):
            return "the JACK server's sample rate changed from \(old) to \(new) Hz: open the output again to follow it"
        case .serverStopped(let reason):
            return "the JACK server stopped the stream\(reason.isEmpty ? "" : ": \(reason)")"
        }
    }
}
