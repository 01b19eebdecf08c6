import MIDICore
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Network MIDI: an RTP-MIDI (RFC 6295) session participant that speaks Apple's session protocol,
/// so macOS's and iOS's network MIDI sessions (and rtpmidid, and hardware that follows them) can
/// connect and play.
///
/// It listens on two consecutive UDP ports, control and data (5004 and 5005 by default), and
/// accepts invitations by its policy (anyone, or only peers whose address is in `allow`; the
/// session name a peer gives is no credential). It answers clock synchronization, sends receiver
/// feedback about once a second while data arrives, ends a session on `BY` or after
/// `sessionTimeout` without a sign of life, and releases the notes a session left sounding when it
/// ends. Packets are checked by sequence number: duplicates and late packets are dropped; a gap
/// (lost packets) releases the session's sounding notes and its sustain pedal, so nothing is left
/// stuck (the recovery journal is skipped by its length and never read as MIDI). Running status
/// resets with each packet; SysEx may come in segments across packets. Every message is stamped on
/// arrival (plus its delta time inside the packet) and pushed into `queue`, which a
/// `LiveMIDIScheduler` drains on the audio thread. Malformed packets are counted and dropped.
///
/// A session is bound to the ports it was opened from: datagrams naming it from anywhere else
/// (packets, `BY`, clock sync) are dropped and counted (`malformedPacketCount`), so that a third
/// party can neither play into it nor end it (`RTPMIDISessionMachine`).
///
/// It can also open sessions itself (`invite(host:port:)`), as the initiator: invitations on the
/// peer's control port and then its data port (repeated once a second until answered, up to ten
/// times), clock synchronization at once and every 10 seconds after, `BY` when it stops.
///
/// The session logic is `RTPMIDISessionMachine` (no sockets, no clock); this class is its UDP
/// plumbing: the two ports, one SwiftNIO event loop thread that feeds it each datagram with its
/// arrival time and ticks it once a second, sends what it asks and pushes its MIDI into `queue`
/// (the queue's one producer). It does not resolve peers by mDNS (see `RTPMIDIAdvertisement` for
/// being found) nor take IPv6 peers.
public final class RTPMIDIListener: @unchecked Sendable {
    /// A remote participant and its activity: a snapshot, made by `RTPMIDISessionMachine`.
    public struct Session: Hashable, Sendable {
        /// The session name the peer gave in its invitation (or its answer to ours), as it came:
        /// any text the peer chose, escape sequences included. Print it through
        /// `PrintableText.escaped(_:)`.
        public var name: String
        /// The peer's address, `HOST:PORT` of its control port.
        public var address: String
        /// The SSRC the peer's control port gave.
        public var ssrc: UInt32
        /// Open on both ports and not ended yet.
        public var isConnected: Bool
        /// Messages it delivered, and the note-offs and pedal releases made for it.
        public var messageCount: Int
        /// Arrival time of its last message (`MIDITimestamp`), 0 if none yet.
        public var lastArrival: UInt64
        /// Packets missing from the sequence.
        public var lostPackets: Int
        /// Gaps repaired from the next packet's recovery journal (the others, where no journal
        /// covered the loss, released the session's notes and pedal).
        public var repairedGaps: Int = 0
        /// Packets whose recovery journal could not be read (their commands were played; a gap
        /// before one was not repaired from it, the session's notes and pedal released instead).
        public var malformedJournals: Int = 0
    }

    /// Where the messages go (to the audio thread).
    public let queue: MIDIEventQueue
    /// The session name offered to peers.
    public let name: String
    /// The address listened on and its control port (the data port is the next one).
    public let host: String
    /// The control port: the one asked for, and after `start()` the one bound (a free pair was chosen
    /// if 0 was asked for). The data port is `port + 1`.
    public private(set) var port: Int
    /// The addresses whose peers may join (by the address an invitation comes from); empty:
    /// anyone.
    public let allow: [RTPMIDIAddressRange]
    /// A session that sends nothing (no clock sync, no data) for this long is ended.
    public let sessionTimeout: Duration

    /// Called on the network thread with each message and its arrival time (for recording).
    /// Set it before `start()`.
    public var messageHandler: (@Sendable (MIDIMessage, UInt64) -> Void)?

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channels: [any Channel] = []
    private let state = Mutex(Snapshot())
    private var driver: Driver?

    struct Snapshot {
        var sessions: [UInt32: Session] = [:]
        var endStates: [UInt32: MIDIChannelStates] = [:]
        var malformed = 0
        var events: [String] = []
    }

    /// - Parameters:
    ///   - host: the address to listen on (`0.0.0.0` for every interface, `127.0.0.1` for this machine).
    ///   - port: the control port; the data port is `port + 1` (0: any free pair, for tests).
    ///   - allow: the addresses whose peers may join (empty: anyone).
    public init(
        host: String = "0.0.0.0", port: Int = 5004, name: String = "Pianola", allow: [RTPMIDIAddressRange] = [],
        sessionTimeout: Duration = .seconds(60), queue: MIDIEventQueue = MIDIEventQueue()
    ) {
        self.host = host
        self.port = port
        self.name = name
        self.allow = allow
        self.sessionTimeout = sessionTimeout
        self.queue = queue
    }

    deinit {
        stop()
        // Nothing is left to tell: the thread is ours alone, and its sessions have ended.
        try? group.syncShutdownGracefully()
    }

    /// The sessions, connected or ended, by SSRC.
    public var sessions: [Session] { state.withLock { $0.sessions.values.sorted { $0.ssrc < $1.ssrc } } }
    /// What the session with SSRC `ssrc` had left in effect when it ended (notes sounding,
    /// programs, controllers, parameters, wheels, the SysEx count), before its notes were
    /// released; nil while it runs. `stop()` ends every session.
    public func stateAtEnd(ofSession ssrc: UInt32) -> MIDIChannelStates? { state.withLock { $0.endStates[ssrc] } }
    /// Datagrams dropped: those that could not be parsed, and those that came where they make no
    /// sense (for no session, or naming a session from another endpoint than its peer's).
    public var malformedPacketCount: Int { state.withLock { $0.malformed } }
    /// Session events since the last call ("connected: NAME (ADDRESS)", "ended: …"), for a log:
    /// the peers' names in them escaped (`PrintableText.escaped(_:)`), safe to print.
    public func takeEvents() -> [String] {
        state.withLock { snapshot in
            let events = snapshot.events
            snapshot.events.removeAll()
            return events
        }
    }

    /// Binds the control and data ports and starts answering.
    public func start() throws(MIDIIOError) {
        guard channels.isEmpty else { return }
        let driver = Driver(listener: self, loop: group.next())
        self.driver = driver
        var attempts = port == 0 ? 20 : 1
        while true {
            let control = port == 0 ? Int.random(in: 20_000..<60_000) : port
            do {
                let controlChannel = try bind(port: control, driver: driver, kind: .control)
                do {
                    let dataChannel = try bind(port: control + 1, driver: driver, kind: .data)
                    channels = [controlChannel, dataChannel]
                    port = control
                    driver.attach(control: controlChannel, data: dataChannel)
                    return
                } catch {
                    // The data port's error is the one to report; a control port that will not
                    // close leaves nothing to do but to try another pair.
                    try? controlChannel.close().wait()
                    throw error
                }
            } catch {
                attempts -= 1
                if attempts == 0 {
                    throw .networkUnavailable(address: "\(host):\(control)", reason: Self.describe(error))
                }
            }
        }
    }

    private func bind(port: Int, driver: Driver, kind: RTPMIDISessionMachine.Port) throws -> any Channel {
        // No SO_REUSEADDR: on a UDP port it lets a second socket bind a port another holds and
        // take its datagrams (a listener picking a random pair could silently steal another
        // session's data port); without it a port in use is an error, and a random pair is tried
        // again.
        try DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(PacketHandler(driver: driver, port: kind))
                }
            }
            .bind(host: host, port: port)
            .wait()
    }

    /// Opens a session to a peer's control port (its data port is the next one), as the initiator.
    /// Call after `start()`. The outcome shows in `sessions` and `takeEvents()` ("connected: …",
    /// "refused by …", "no answer from …").
    public func invite(host: String, port: Int) throws(MIDIIOError) {
        let address = try Self.resolve(host: host, port: port)
        guard let driver, !channels.isEmpty else {
            throw .networkUnavailable(address: "\(self.host):\(self.port)", reason: "not started")
        }
        let peer = RTPMIDIAddress(host: address.ipAddress ?? host, port: port)
        driver.loop.execute { driver.invite(peer) }
    }

    /// Sends `messages` to every open session (in order, in one packet where they fit), each
    /// packet with the recovery journal of what was sent before; after a pause a journal-only
    /// guard packet follows, so that a peer that lost the last packet repairs it. Call after
    /// `start()`; any thread (the sending happens on the listener's own). Throws
    /// ``MIDIValueError``, sending nothing, when a message holds a number MIDI 1.0 cannot carry
    /// (see ``MIDIMessage/validated()``).
    public func send(_ messages: [MIDIMessage]) throws(MIDIValueError) {
        for message in messages { _ = try message.validated() }
        guard let driver, !channels.isEmpty, !messages.isEmpty else { return }
        driver.loop.execute { driver.send(messages) }
    }

    /// Checks that a peer's address resolves (before anything else starts, for a clear error).
    public static func checkPeer(host: String, port: Int) throws(MIDIIOError) {
        _ = try resolve(host: host, port: port)
    }

    /// The address a session opened with `invite(host:port:)` shows (`Session.address`): the
    /// peer's IPv4 address and port, `ADDRESS:PORT`.
    public static func sessionAddress(host: String, port: Int) throws(MIDIIOError) -> String {
        let address = try resolve(host: host, port: port)
        return RTPMIDIAddress(host: address.ipAddress ?? host, port: port).description
    }

    /// The IPv4 address `host` resolves to, as text (`RTPMIDIAddressRange.init(resolving:)`).
    static func ipAddress(of host: String) throws(MIDIIOError) -> String {
        // (Any port: only the address is kept.)
        guard let address = try resolve(host: host, port: 1).ipAddress else {
            throw .unknownHost(host, reason: "no IPv4 address")
        }
        return address
    }

    /// The peer's IPv4 address (the session's ports are IPv4 sockets: a name that also has an IPv6
    /// address, such as `localhost`, resolves to its IPv4 one).
    static func resolve(host: String, port: Int) throws(MIDIIOError) -> SocketAddress {
        guard (1...65_534).contains(port) else { throw .unknownHost("\(host):\(port)", reason: "port out of range") }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        guard status == 0, let info = result, let raw = info.pointee.ai_addr else {
            throw .unknownHost(host, reason: String(cString: gai_strerror(status)) + " (IPv4 peers only)")
        }
        defer { freeaddrinfo(result) }
        var address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
        address.sin_port = in_port_t(port).bigEndian
        return SocketAddress(address, host: host)
    }

    /// Ends every session (sending `BY`, releasing their notes) and closes the ports.
    public func stop() {
        guard !channels.isEmpty, let driver else { return }
        // (The loop is ours and runs until deinit: the submission cannot fail. A port that will
        // not close is left to the process's end: nothing else can be done with it.)
        try? driver.loop.submit { driver.endAll() }.wait()
        for channel in channels { try? channel.close().wait() }
        channels = []
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        return "\(error)"
    }

    // MARK: Called by the driver, on the event loop

    fileprivate func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { snapshot in body(&snapshot) }
    }
}

/// Receives datagrams on one port and hands them to the driver.
private final class PacketHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let driver: RTPMIDIListener.Driver
    let port: RTPMIDISessionMachine.Port

    init(driver: RTPMIDIListener.Driver, port: RTPMIDISessionMachine.Port) {
        self.driver = driver
        self.port = port
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let arrival = MIDITimestamp.now()
        driver.receive(Array(envelope.data.readableBytesView), from: envelope.remoteAddress, on: port, at: arrival)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram error (e.g. ICMP port unreachable from a peer that left) must not close the port.
    }
}

extension RTPMIDIListener {
    /// Runs the session state machine on the event loop: datagrams and ticks in, its outputs out
    /// (sent, pushed into the queue, published under the listener's lock). Confined to its loop.
    final class Driver: @unchecked Sendable {
        unowned let listener: RTPMIDIListener
        let loop: any EventLoop
        var machine: RTPMIDISessionMachine
        var control: (any Channel)?
        var data: (any Channel)?
        var timer: RepeatedTask?
        var reportedMalformed = 0

        init(listener: RTPMIDIListener, loop: any EventLoop) {
            self.listener = listener
            self.loop = loop
            machine = RTPMIDISessionMachine(
                name: listener.name, allow: listener.allow, sessionTimeout: listener.sessionTimeout)
        }

        func attach(control: any Channel, data: any Channel) {
            self.control = control
            self.data = data
            timer = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [self] _ in tick() }
        }

        func receive(
            _ bytes: [UInt8], from address: SocketAddress, on port: RTPMIDISessionMachine.Port, at arrival: UInt64
        ) {
            let peer = RTPMIDIAddress(host: address.ipAddress ?? "?", port: address.port ?? 0)
            machine.receive(bytes, from: peer, on: port, at: arrival)
            flush()
        }

        func invite(_ control: RTPMIDIAddress) {
            machine.invite(control)
            flush()
        }

        func tick() {
            machine.tick(now: MIDITimestamp.now())
            flush()
        }

        func send(_ messages: [MIDIMessage]) {
            try? machine.send(messages, at: MIDITimestamp.now())  // checked by `RTPMIDIListener.send`
            flush()
            // The guard, if nothing else goes out before it is due.
            let delay = Int64(RTPMIDISessionMachine.guardInterval) + 5_000_000
            loop.scheduleTask(in: .nanoseconds(delay)) { [self] in
                machine.sendGuards(now: MIDITimestamp.now())
                flush()
            }
        }

        func endAll() {
            timer?.cancel()
            machine.endAll(now: MIDITimestamp.now())
            flush()
        }

        /// Carries out what the machine asked, in order.
        func flush() {
            let listener = listener
            let handler = listener.messageHandler
            machine.drain { output in
                switch output {
                case .send(let bytes, let address, let port):
                    send(bytes, to: address, from: port)
                case .midi(let message, let time, let source):
                    listener.queue.push(message, arrival: time, source: source)
                    handler?(message, time)
                case .session(let session):
                    listener.update { $0.sessions[session.ssrc] = session }
                case .ended(let ssrc, let state):
                    listener.update { $0.endStates[ssrc] = state }
                case .event(let event):
                    listener.update { $0.events.append(event) }
                }
            }
            if machine.malformedCount != reportedMalformed {
                reportedMalformed = machine.malformedCount
                let count = reportedMalformed
                listener.update { $0.malformed = count }
            }
        }

        func send(_ bytes: [UInt8], to address: RTPMIDIAddress, from port: RTPMIDISessionMachine.Port) {
            // (Every address the machine sends to came from a datagram or from `resolve`: one that
            // does not parse cannot happen, and would have nowhere to go.)
            guard let channel = port == .data ? data : control,
                let remote = try? SocketAddress(ipAddress: address.host, port: address.port)
            else { return }
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
        }
    }
}
