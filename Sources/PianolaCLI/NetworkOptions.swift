import ArgumentParser
import Pianola

/// Network MIDI (RTP-MIDI) for `live`: sessions peers open, and sessions this side opens.
struct NetworkOptions: ParsableArguments {
    @Option(
        name: .customLong("rtpmidi"), parsing: .unconditional,
        help: ArgumentHelp(
            "Accept network MIDI sessions (RTP-MIDI, as macOS and iOS offer) on this UDP port and the next: [ADDRESS:]PORT, e.g. 5004 or 127.0.0.1:5004.",
            valueName: "[addr:]port"),
        transform: ArgumentParsing.listenAddress)
    var listen: RTPMIDIAddress?

    @Flag(
        name: .customLong("mdns"), inversion: .prefixedNo,
        help: "Advertise the --rtpmidi session over mDNS (avahi), so Macs and iPads list it by name.")
    var advertise = true

    @Option(
        name: .customLong("rtpmidi-connect"),
        help: ArgumentHelp(
            "Open a network MIDI session to a peer (a Mac's network session, rtpmidid, another pianola): HOST:PORT of its control port (repeatable).",
            valueName: "host:port"),
        transform: ArgumentParsing.peerAddress)
    var peers: [RTPMIDIAddress] = []

    @Option(
        name: .customLong("rtpmidi-allow"),
        help: ArgumentHelp(
            "Accept network sessions only from this IP address or CIDR range, e.g. 192.168.1.20 or 192.168.1.0/24 (repeatable; default: anyone). Not a session name: anyone can claim any name.",
            valueName: "addr[/bits]"),
        transform: ArgumentParsing.allowedAddresses)
    var allow: [RTPMIDIAddressRange] = []

    @Option(
        name: .customLong("rtpmidi-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "End a network session after this many seconds without clock sync or data (its notes released).",
            valueName: "seconds"))
    var timeout = 60.0

    @Option(
        name: .customLong("rtpmidi-state"),
        help: ArgumentHelp(
            "On exit, write what each network session had left in effect when it ended (notes sounding, programs, controllers, RPN/NRPN values, pitch wheels, SysEx count; lost and repaired packets) as JSON.",
            valueName: "file.json"))
    var stateReport: String?

    func validate() throws {
        if !allow.isEmpty && listen == nil { throw ValidationError("--rtpmidi-allow needs --rtpmidi") }
        if stateReport != nil && listen == nil && peers.isEmpty {
            throw ValidationError("--rtpmidi-state needs --rtpmidi or --rtpmidi-connect")
        }
        guard (1...3_600).contains(timeout) else {
            throw ValidationError("--rtpmidi-timeout must be between 1 and 3600 seconds")
        }
    }

    /// Where sessions are taken and who may join, for the one line that says so when the ports
    /// open: "0.0.0.0:5004 and 5005 (every interface) as 'Pianola': anyone may join (…)", "…:
    /// anyone on this machine may join", "…: only 192.168.1.0/24 may join".
    func listening(host: String, port: Int) -> String {
        let place =
            "\(host):\(port) and \(port + 1)" + (host == "0.0.0.0" ? " (every interface)" : "") + " as 'Pianola'"
        if !allow.isEmpty { return "\(place): only \(allow.map(\.description).joined(separator: ", ")) may join" }
        if host.hasPrefix("127.") { return "\(place): anyone on this machine may join" }
        return "\(place): anyone may join (--rtpmidi-allow ADDRESS[/BITS] restricts)"
    }

    /// The session's network MIDI, if any was asked for.
    var configuration: LiveSession.NetworkMIDI? {
        guard listen != nil || !peers.isEmpty else { return nil }
        var network = LiveSession.NetworkMIDI(listen: listen, peers: peers)
        network.allow = allow
        network.sessionTimeout = .milliseconds(Int64((timeout * 1000).rounded()))
        network.advertises = advertise
        return network
    }
}
