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
/// accepts invitations by its policy (anyone, or only the session names and addresses in
/// `allow`). It answers clock synchronization, sends receiver feedback about once a second while
/// data arrives, ends a session on `BY` or after `sessionTimeout` without a sign of life, and
/// releases the notes a session left sounding when it ends. Packets are checked by sequence
/// number: duplicates and late packets are dropped; a gap (lost packets) releases the session's
/// sounding notes and its sustain pedal, so nothing is left stuck (the recovery journal is
/// skipped by its length and never read as MIDI). Running status resets with each packet; SysEx
/// may come in segments across packets. Every message is stamped on arrival (plus its delta time
/// inside the packet) and pushed into `queue`, which a `LiveMIDIScheduler` drains on the audio
/// thread. Malformed packets are counted and dropped.
///
/// It can also open sessions itself (`invite(host:port:)`), as the initiator: invitations on the
/// peer's control port and then its data port (repeated once a second until answered, up to ten
/// times), clock synchronization at once and every 10 seconds after, `BY` when it stops.
///
/// All of this runs on one SwiftNIO event loop thread: the queue's one producer.
public final class RTPMIDIListener: @unchecked Sendable {
    /// A remote participant and its activity.
    public struct Session: Hashable, Sendable {
        public var name: String
        /// The peer's address, `HOST:PORT` of its control port.
        public var address: String
        public var ssrc: UInt32
        public var isConnected: Bool
        public var messageCount: Int
        /// Arrival time of its last message (`MIDITimestamp`), 0 if none yet.
        public var lastArrival: UInt64
        /// Packets missing from the sequence (each gap released the session's notes).
        public var lostPackets: Int
    }

    /// Where the messages go (to the audio thread).
    public let queue: MIDIEventQueue
    /// The session name offered to peers.
    public let name: String
    /// The address listened on and its control port (the data port is the next one).
    public let host: String
    public private(set) var port: Int
    /// Session names or IP addresses allowed to join; empty: anyone.
    public let allow: [String]
    /// A session that sends nothing (no clock sync, no data) for this long is ended.
    public let sessionTimeout: Duration

    /// Called on the network thread with each message and its arrival time (for recording).
    /// Set it before `start()`.
    public var messageHandler: (@Sendable (MIDIMessage, UInt64) -> Void)?

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channels: [any Channel] = []
    private let state = Mutex(Snapshot())
    private var responder: Responder?

    struct Snapshot {
        var sessions: [UInt32: Session] = [:]
        var malformed = 0
        var events: [String] = []
    }

    /// - Parameters:
    ///   - host: the address to listen on (`0.0.0.0` for every interface, `127.0.0.1` for this machine).
    ///   - port: the control port; the data port is `port + 1` (0: any free pair, for tests).
    public init(
        host: String = "0.0.0.0", port: Int = 5004, name: String = "Pianola", allow: [String] = [],
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
        try? group.syncShutdownGracefully()
    }

    /// The sessions, connected or ended, by SSRC.
    public var sessions: [Session] { state.withLock { $0.sessions.values.sorted { $0.ssrc < $1.ssrc } } }
    /// Packets that could not be parsed (dropped).
    public var malformedPacketCount: Int { state.withLock { $0.malformed } }
    /// Session events since the last call ("connected: NAME (ADDRESS)", "ended: …"), for a log.
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
        let responder = Responder(listener: self, loop: group.next())
        self.responder = responder
        var attempts = port == 0 ? 20 : 1
        while true {
            let control = port == 0 ? Int.random(in: 20_000..<60_000) : port
            do {
                let controlChannel = try bind(port: control, responder: responder, isData: false)
                do {
                    let dataChannel = try bind(port: control + 1, responder: responder, isData: true)
                    channels = [controlChannel, dataChannel]
                    port = control
                    responder.attach(control: controlChannel, data: dataChannel)
                    return
                } catch {
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

    private func bind(port: Int, responder: Responder, isData: Bool) throws -> any Channel {
        try DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(PacketHandler(responder: responder, isData: isData))
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
        guard let responder, !channels.isEmpty else {
            throw .networkUnavailable(address: "\(self.host):\(self.port)", reason: "not started")
        }
        responder.loop.execute { responder.invite(address) }
    }

    /// Checks that a peer's address resolves (before anything else starts, for a clear error).
    public static func checkPeer(host: String, port: Int) throws(MIDIIOError) {
        _ = try resolve(host: host, port: port)
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
        guard !channels.isEmpty, let responder else { return }
        try? responder.loop.submit { responder.endAll() }.wait()
        for channel in channels { try? channel.close().wait() }
        channels = []
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        return "\(error)"
    }

    // MARK: Called by the responder, on the event loop

    fileprivate func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { snapshot in body(&snapshot) }
    }
}

/// Receives datagrams on one port and hands them to the responder.
private final class PacketHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let responder: RTPMIDIListener.Responder
    let isData: Bool

    init(responder: RTPMIDIListener.Responder, isData: Bool) {
        self.responder = responder
        self.isData = isData
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let arrival = MIDITimestamp.now()
        responder.receive(
            Array(envelope.data.readableBytesView), from: envelope.remoteAddress, onData: isData, at: arrival)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram error (e.g. ICMP port unreachable from a peer that left) must not close the port.
    }
}

extension RTPMIDIListener {
    /// The session logic. Confined to its event loop.
    final class Responder: @unchecked Sendable {
        struct Peer {
            var session: Session
            var control: SocketAddress
            var data: SocketAddress?
            var token: UInt32
            var lastSequence: UInt16?
            var lastFeedbackSequence: UInt16?
            var lastHeard: UInt64
            var sounding: Set<UInt16> = []  // channel << 8 | note
            var sustained: Set<UInt8> = []
            var sysEx: [UInt8]?
            var tag: UInt16
            /// When this side opened the session: the last clock sync it started.
            var lastSync: UInt64?
        }

        /// A session this side is opening: invited on the control port, then on the data port.
        struct Invitation {
            var control: SocketAddress
            var data: SocketAddress
            var onData = false
            var attempts = 1
            var peerSSRC: UInt32 = 0
            var peerName = ""
        }

        unowned let listener: RTPMIDIListener
        let loop: any EventLoop
        let ssrc = UInt32.random(in: 1...UInt32.max)
        var control: (any Channel)?
        var data: (any Channel)?
        var peers: [UInt32: Peer] = [:]
        /// Sessions being opened, by their token.
        var invitations: [UInt32: Invitation] = [:]
        /// Invitations are sent this many times (once a second) before giving up.
        static let invitationAttempts = 10
        /// Clock synchronization of the sessions this side opened, every so many nanoseconds.
        static let syncInterval: UInt64 = 10_000_000_000
        var nextTag: UInt16 = 0x4000
        /// The latest time stamped on a message (the queue must stay in time order).
        var lastStamp: UInt64 = 0
        var timer: RepeatedTask?

        init(listener: RTPMIDIListener, loop: any EventLoop) {
            self.listener = listener
            self.loop = loop
        }

        func attach(control: any Channel, data: any Channel) {
            self.control = control
            self.data = data
            timer = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [self] _ in tick() }
        }

        /// Our clock for CK: 100 µs ticks.
        var clock: UInt64 { MIDITimestamp.now() / 100_000 }

        func receive(_ bytes: [UInt8], from address: SocketAddress, onData: Bool, at arrival: UInt64) {
            if AppleMIDICommand.isCommand(bytes) {
                do {
                    handle(try AppleMIDICommand(parsing: bytes), from: address, onData: onData, at: arrival)
                } catch {
                    listener.update { $0.malformed += 1 }
                }
                return
            }
            guard onData else {
                listener.update { $0.malformed += 1 }
                return
            }
            do {
                handle(try RTPMIDIPacket(parsing: bytes), at: arrival)
            } catch {
                listener.update { $0.malformed += 1 }
            }
        }

        func allowed(name: String, address: SocketAddress) -> Bool {
            listener.allow.isEmpty || listener.allow.contains(name)
                || address.ipAddress.map { listener.allow.contains($0) } == true
        }

        func send(_ command: AppleMIDICommand, to address: SocketAddress, onData: Bool) {
            guard let channel = onData ? data : control else { return }
            var buffer = channel.allocator.buffer(capacity: 64)
            buffer.writeBytes(command.bytes)
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
        }

        func describe(_ address: SocketAddress) -> String {
            "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        }

        func handle(_ command: AppleMIDICommand, from address: SocketAddress, onData: Bool, at arrival: UInt64) {
            switch command {
            case .invitation(let token, let peerSSRC, let name):
                guard allowed(name: name, address: address) else {
                    send(.reject(token: token, ssrc: ssrc), to: address, onData: onData)
                    listener.update { $0.events.append("refused: \(name) (\(self.describe(address)))") }
                    return
                }
                if !onData {
                    if peers[peerSSRC] == nil {
                        nextTag &+= 1
                        peers[peerSSRC] = Peer(
                            session: Session(
                                name: name, address: describe(address), ssrc: peerSSRC, isConnected: false,
                                messageCount: 0, lastArrival: 0, lostPackets: 0),
                            control: address, token: token, lastHeard: arrival, tag: nextTag)
                    }
                    peers[peerSSRC]?.control = address
                    peers[peerSSRC]?.token = token
                    peers[peerSSRC]?.lastHeard = arrival
                    send(.accept(token: token, ssrc: ssrc, name: listener.name), to: address, onData: false)
                } else {
                    guard peers[peerSSRC] != nil else {
                        // A data-port invitation without the control one first.
                        send(.reject(token: token, ssrc: ssrc), to: address, onData: true)
                        return
                    }
                    peers[peerSSRC]?.data = address
                    peers[peerSSRC]?.lastHeard = arrival
                    let wasConnected = peers[peerSSRC]?.session.isConnected ?? false
                    peers[peerSSRC]?.session.isConnected = true
                    send(.accept(token: token, ssrc: ssrc, name: listener.name), to: address, onData: true)
                    if !wasConnected, let peer = peers[peerSSRC] {
                        publish(peer, event: "connected: \(peer.session.name) (\(peer.session.address))")
                    }
                }
            case .end(let token, let peerSSRC):
                // (A peer may also end a session this side is still opening.)
                for (pending, invitation) in invitations where pending == token || invitation.peerSSRC == peerSSRC {
                    invitations[pending] = nil
                    listener.update { $0.events.append("ended by \(self.describe(invitation.control))") }
                }
                end(peerSSRC, reason: "ended")
            case .clockSync(let peerSSRC, let count, let timestamps):
                // (A peer that gives its data port an SSRC of its own, as pymidi does, is found by
                // the address its data comes from.)
                guard onData,
                    let key = peers[peerSSRC] != nil ? peerSSRC : peers.first(where: { $0.value.data == address })?.key
                else { return }
                peers[key]?.lastHeard = arrival
                if count == 0 {
                    send(
                        .clockSync(ssrc: ssrc, count: 1, timestamps: [timestamps[0], clock, 0]), to: address,
                        onData: true)
                } else if count == 1 {
                    // The answer to a sync this side started: the third leg closes it.
                    send(
                        .clockSync(ssrc: ssrc, count: 2, timestamps: [timestamps[0], timestamps[1], clock]),
                        to: address, onData: true)
                }
            case .accept(let token, let peerSSRC, let name):
                accepted(token: token, peerSSRC: peerSSRC, name: name, onData: onData, at: arrival)
            case .reject(let token, _):
                guard let invitation = invitations.removeValue(forKey: token) else { return }
                listener.update { $0.events.append("refused by \(self.describe(invitation.control))") }
            case .receiverFeedback, .bitrateLimit:
                break
            }
        }

        /// Sends the first invitation of a session to `control` (its data port is the next).
        func invite(_ control: SocketAddress) {
            var token = UInt32.random(in: 1...UInt32.max)
            while invitations[token] != nil { token = UInt32.random(in: 1...UInt32.max) }
            var data = control
            data.port = (control.port ?? 0) + 1
            invitations[token] = Invitation(control: control, data: data)
            send(.invitation(token: token, ssrc: ssrc, name: listener.name), to: control, onData: false)
        }

        /// A peer accepted an invitation of ours: on to the data port, or the session is open.
        func accepted(token: UInt32, peerSSRC: UInt32, name: String, onData: Bool, at arrival: UInt64) {
            guard var invitation = invitations[token], invitation.onData == onData else { return }
            if !onData {
                invitation.onData = true
                invitation.attempts = 1
                invitation.peerSSRC = peerSSRC
                invitation.peerName = name
                invitations[token] = invitation
                send(.invitation(token: token, ssrc: ssrc, name: listener.name), to: invitation.data, onData: true)
                return
            }
            invitations[token] = nil
            // (Keyed by the SSRC the control port gave: Apple's peers give the same on both.)
            let key = invitation.peerSSRC
            if peers[key] != nil {
                // Already a session with this peer (it invited us too): keep that one.
                peers[key]?.lastHeard = arrival
                return
            }
            nextTag &+= 1
            let peer = Peer(
                session: Session(
                    name: invitation.peerName, address: describe(invitation.control), ssrc: key, isConnected: true,
                    messageCount: 0, lastArrival: 0, lostPackets: 0),
                control: invitation.control, data: invitation.data, token: token, lastHeard: arrival, tag: nextTag,
                lastSync: arrival)
            peers[key] = peer
            publish(peer, event: "connected: \(peer.session.name) (\(peer.session.address))")
            startSync(with: invitation.data)
        }

        /// The first leg of a clock synchronization (count 0).
        func startSync(with data: SocketAddress) {
            send(.clockSync(ssrc: ssrc, count: 0, timestamps: [clock, 0, 0]), to: data, onData: true)
        }

        func handle(_ packet: RTPMIDIPacket, at arrival: UInt64) {
            guard var peer = peers[packet.ssrc], peer.session.isConnected else {
                listener.update { $0.malformed += 1 }
                return
            }
            peer.lastHeard = arrival
            if let last = peer.lastSequence {
                let step = Int16(bitPattern: packet.sequence &- last)
                if step <= 0 {
                    peers[packet.ssrc] = peer
                    return  // a duplicate or a late packet: dropped, nothing repaired
                }
                if step > 1 {
                    peer.session.lostPackets += Int(step) - 1
                    release(&peer, at: arrival)
                }
            }
            peer.lastSequence = packet.sequence
            for command in packet.commands {
                // Delta times are 100 µs ticks (at most 20 ms is honoured); times never go back, so
                // the queue stays in time order even when packets come faster than their deltas.
                let time = max(arrival + UInt64(min(command.delta, 200)) * 100_000, lastStamp)
                lastStamp = time
                deliverCommand(command.bytes, to: &peer, at: time)
            }
            peers[packet.ssrc] = peer
            publish(peer, event: nil)
        }

        func deliverCommand(_ bytes: [UInt8], to peer: inout Peer, at time: UInt64) {
            guard let first = bytes.first else { return }
            if first == 0xF0 || first == 0xF7 {
                let last = bytes.last ?? 0
                let body = bytes.count >= 2 ? Array(bytes[1..<(bytes.count - 1)]) : []
                switch (first, last) {
                case (0xF0, 0xF7): deliver(.systemExclusive(body), to: &peer, at: time)
                case (0xF0, 0xF0): peer.sysEx = body  // first segment
                case (0xF7, 0xF0):  // middle segment
                    if peer.sysEx != nil { peer.sysEx! += body }
                case (0xF7, 0xF7):  // last segment
                    if let start = peer.sysEx { deliver(.systemExclusive(start + body), to: &peer, at: time) }
                    peer.sysEx = nil
                default:  // F4: cancelled
                    peer.sysEx = nil
                }
                return
            }
            let message = MIDIMessage(
                status: first, data1: bytes.count > 1 ? bytes[1] : 0, data2: bytes.count > 2 ? bytes[2] : 0)
            if let message { deliver(message, to: &peer, at: time) }
        }

        func deliver(_ message: MIDIMessage, to peer: inout Peer, at time: UInt64) {
            switch message {
            case .noteOn(let channel, let note, let velocity) where velocity > 0:
                peer.sounding.insert(UInt16(channel) << 8 | UInt16(note))
            case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                peer.sounding.remove(UInt16(channel) << 8 | UInt16(note))
            case .controlChange(let channel, 64, let value):
                if value >= 64 { peer.sustained.insert(channel) } else { peer.sustained.remove(channel) }
            case .controlChange(let channel, 120, _), .controlChange(let channel, 123, _):
                peer.sounding = peer.sounding.filter { $0 >> 8 != UInt16(channel) }
            default:
                break
            }
            listener.queue.push(message, arrival: time, source: peer.tag)
            listener.messageHandler?(message, time)
            peer.session.messageCount += 1
            peer.session.lastArrival = time
        }

        /// Releases what a session left sounding: note-offs and the sustain pedal up.
        func release(_ peer: inout Peer, at now: UInt64) {
            let time = max(now, lastStamp)
            lastStamp = time
            for key in peer.sounding.sorted() {
                deliver(.noteOff(channel: UInt8(key >> 8), note: UInt8(key & 0x7F), velocity: 0), to: &peer, at: time)
            }
            for channel in peer.sustained.sorted() {
                deliver(.controlChange(channel: channel, controller: 64, value: 0), to: &peer, at: time)
            }
            peer.sysEx = nil
        }

        func end(_ peerSSRC: UInt32, reason: String) {
            guard var peer = peers[peerSSRC] else { return }
            release(&peer, at: MIDITimestamp.now())
            peer.session.isConnected = false
            peers[peerSSRC] = nil
            publish(peer, event: "\(reason): \(peer.session.name) (\(peer.session.address))")
        }

        func endAll() {
            timer?.cancel()
            // Half-open sessions (the control port accepted): ended too.
            for (token, invitation) in invitations where invitation.onData {
                send(.end(token: token, ssrc: ssrc), to: invitation.control, onData: false)
            }
            invitations.removeAll()
            for (peerSSRC, peer) in peers {
                send(.end(token: peer.token, ssrc: ssrc), to: peer.control, onData: false)
                end(peerSSRC, reason: "ended")
            }
        }

        func publish(_ peer: Peer, event: String?) {
            let session = peer.session
            listener.update {
                $0.sessions[session.ssrc] = session
                if let event { $0.events.append(event) }
            }
        }

        /// Once a second: receiver feedback for new data, and the timeout.
        func tick() {
            let now = MIDITimestamp.now()
            for (token, invitation) in invitations {
                if invitation.attempts >= Self.invitationAttempts {
                    invitations[token] = nil
                    listener.update { $0.events.append("no answer from \(self.describe(invitation.control))") }
                    continue
                }
                invitations[token]?.attempts += 1
                send(
                    .invitation(token: token, ssrc: ssrc, name: listener.name),
                    to: invitation.onData ? invitation.data : invitation.control, onData: invitation.onData)
            }
            for (peerSSRC, peer) in peers {
                guard let last = peer.lastSync, let data = peer.data, now &- last >= Self.syncInterval else { continue }
                peers[peerSSRC]?.lastSync = now
                startSync(with: data)
            }
            let components = listener.sessionTimeout.components
            let timeout = UInt64(components.seconds) * 1_000_000_000 + UInt64(components.attoseconds / 1_000_000_000)
            for (peerSSRC, peer) in peers {
                if now &- peer.lastHeard > timeout {
                    end(peerSSRC, reason: "timed out")
                    continue
                }
                if let sequence = peer.lastSequence, sequence != peer.lastFeedbackSequence {
                    // The 16-bit sequence number in the upper half, as Apple's peers expect.
                    send(
                        .receiverFeedback(ssrc: ssrc, sequence: UInt32(sequence) << 16), to: peer.control, onData: false
                    )
                    peers[peerSSRC]?.lastFeedbackSequence = sequence
                }
            }
        }
    }
}
