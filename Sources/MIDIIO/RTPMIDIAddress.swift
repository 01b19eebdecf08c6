/// A UDP endpoint of network MIDI: a host written as text and a port.
///
/// A value of its own, so that `RTPMIDISessionMachine` needs no socket library and tests can name
/// peers directly (`RTPMIDIAddress(host: "10.0.0.2", port: 5004)`). `RTPMIDIListener` converts
/// from and to SwiftNIO's `SocketAddress`. It does not resolve names or check that the host is
/// a valid address: two values are the same endpoint when their texts and ports are equal, so
/// inside the state machine the host is written the one way the socket layer writes it
/// (`127.0.0.1`, not `localhost`). Where a user names a peer to invite or an address to listen
/// on, the host may be a name: `RTPMIDIListener` resolves it.
public struct RTPMIDIAddress: Hashable, Sendable, CustomStringConvertible {
    /// The IP address, as text (`127.0.0.1`), or a host name still to be resolved.
    public var host: String
    /// The UDP port.
    public var port: Int

    /// An endpoint, taken as written (nothing is resolved or checked).
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, as session addresses and events show it.
    public var description: String { "\(host):\(port)" }

    /// The same host and the port after this one: a participant's data port follows its control
    /// port.
    public var nextPort: RTPMIDIAddress { RTPMIDIAddress(host: host, port: port + 1) }
}
