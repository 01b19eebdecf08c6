import CJACK

/// libjack, loaded the first time a JACK client is asked for.
enum JACKLibrary {
    /// The table of JACK functions, or why there is none.
    static func load() throws(JACKError) -> UnsafePointer<pianola_jack_api> {
        var message = [CChar](repeating: 0, count: 512)
        guard let api = pianola_jack_load(&message, message.count) else {
            let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw .libraryUnavailable(String(decoding: bytes, as: UTF8.self))
        }
        return api
    }

    /// What JACK's status bits say went wrong opening `client`.
    static func openingError(_ status: jack_status_t, client: String, server: String?) -> JACKError {
        let bits = status.rawValue
        if bits & JackServerFailed.rawValue != 0 || bits & JackServerError.rawValue != 0 {
            return .serverUnavailable(server: server)
        }
        var reasons: [String] = []
        if bits & JackVersionError.rawValue != 0 { reasons.append("the server's protocol version differs") }
        if bits & JackShmFailure.rawValue != 0 { reasons.append("shared memory could not be mapped") }
        if bits & JackInitFailure.rawValue != 0 { reasons.append("the client could not be initialized") }
        if bits & JackNameNotUnique.rawValue != 0 { reasons.append("the name is taken") }
        if bits & JackNoSuchClient.rawValue != 0 { reasons.append("no such client") }
        if reasons.isEmpty { reasons.append("status 0x\(String(bits, radix: 16))") }
        return .cannotOpen(client: client, reason: reasons.joined(separator: "; "))
    }
}

/// The JACK server, as a client sees it.
public enum JACK {
    /// Whether a JACK server answers (the one named `server`, or the default one:
    /// `$JACK_DEFAULT_SERVER`, else `default`). A client is opened and closed to find out; false
    /// without a JACK library.
    public static func isServerRunning(named server: String? = nil) -> Bool {
        guard let api = try? JACKLibrary.load() else { return false }
        var status = jack_status_t(rawValue: 0)
        guard let client = pianola_jack_client_open("pianola-probe", JackNoStartServer, &status, server) else {
            return false
        }
        _ = api.pointee.client_close(client)
        return true
    }
}
