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

    /// The full names of `client`'s server's ports of `type` (nil: any) with `flags` (0: any).
    static func portNames(
        _ api: UnsafePointer<pianola_jack_api>, _ client: OpaquePointer, type: String?, flags: UInt
    ) -> [String] {
        guard let list = api.pointee.get_ports(client, nil, type, flags) else { return [] }
        defer { api.pointee.free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// `body` with a short-lived client (`pianola-probe`) of the server named `server` (or the
    /// default one); nil without a JACK library or a server.
    static func withProbe<Result>(
        server: String?, _ body: (UnsafePointer<pianola_jack_api>, OpaquePointer) -> Result
    ) -> Result? {
        guard let api = try? load() else { return nil }
        var status = jack_status_t(rawValue: 0)
        guard let client = pianola_jack_client_open("pianola-probe", JackNoStartServer, &status, server) else {
            return nil
        }
        defer { _ = api.pointee.client_close(client) }
        return body(api, client)
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
        if bits & JackInvalidOption.rawValue != 0 { reasons.append("the name or an option is invalid") }
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
        JACKLibrary.withProbe(server: server) { _, _ in true } ?? false
    }

    /// A port in a JACK server's graph.
    public struct Port: Sendable, Hashable {
        /// Its full name, `client:port`.
        public var name: String
        /// Whether it carries MIDI (else audio).
        public var isMIDI: Bool
        /// Whether it sends (an output: a source to connect from), else it receives.
        public var isOutput: Bool
        /// Whether it stands for hardware (a sound card's channel, a MIDI interface's port).
        public var isPhysical: Bool
    }

    /// The ports of the server's graph (the one named `server`, or the default one), audio and
    /// MIDI; nil without a JACK library or a server.
    public static func ports(server: String? = nil) -> [Port]? {
        JACKLibrary.withProbe(server: server) { api, client in
            JACKLibrary.portNames(api, client, type: nil, flags: 0).compactMap { name -> Port? in
                guard !name.hasPrefix("pianola-probe:"), let port = api.pointee.port_by_name(client, name) else {
                    return nil
                }
                let flags = UInt32(bitPattern: api.pointee.port_flags(port))
                let type = api.pointee.port_type(port).map { String(cString: $0) } ?? ""
                return Port(
                    name: name, isMIDI: type == JACK_DEFAULT_MIDI_TYPE,
                    isOutput: flags & JackPortIsOutput.rawValue != 0,
                    isPhysical: flags & JackPortIsPhysical.rawValue != 0)
            }
        }
    }
}
