import MIDICore

/// The RTP-MIDI session logic of `RTPMIDIListener`, without sockets, clock, threads or
/// randomness of its own: datagrams in, datagrams, MIDI messages and session events out.
///
/// Its driver hands it each datagram received (`receive(_:from:on:at:)`, with the peer's address,
/// the port it came to and its arrival time), calls `tick(now:)` about once a second for what
/// depends on time, and `invite(_:)` and `endAll(now:)` when asked to; then it takes the outputs
/// in order (`drain(_:)`): datagrams to send, MIDI messages with their times, session snapshots
/// and events. Tests drive it the same way, with times of their choosing and a fixed `seed`.
///
/// As the responder it accepts invitations by its policy (anyone, or only peers whose address is in
/// one of the ranges of `allow`: never by the session name a peer gives, which anyone can claim),
/// on the control port first, then on the data port, where the session opens; it answers clock
/// synchronization (the first leg with the second, the second with the third), sends receiver
/// feedback on each tick when data arrived (the last sequence number in the upper 16 bits, as
/// Apple's peers expect) and ends a session on `BY` or after `sessionTimeout` without a sign of
/// life. A peer that gives its data port an SSRC of its own (pymidi does) is found by its data
/// port's address for clock synchronization.
///
/// A session is bound to the endpoints it was opened with: the peer's control port (the address
/// its control-port invitation came from, or the one this side invited) and its data port (the
/// address its data-port invitation came from, on the same host, or the port after the control
/// port this side invited). A datagram that names the session's SSRC from anywhere else (RTP-MIDI
/// packets, `BY`, clock sync, receiver feedback, an invitation claiming its SSRC from another
/// control port, answers to our invitations from elsewhere) changes nothing: it is dropped and
/// counted with the malformed ones (`malformedCount`), so that a third party cannot play into a
/// session or end it.
///
/// As the initiator (`invite(_:)`) it invites a peer's control port, then its data port, again on
/// each tick until answered, up to `invitationAttempts` times ("no answer from …"); a refusal is
/// "refused by …". Once open it starts clock synchronization at once and every `syncInterval`.
/// `endAll(now:)` says `BY` to every session and to invitations the control port accepted.
///
/// Sending (`send(_:at:)`): each open session gets the messages in RTP-MIDI packets of its own
/// sequence, each with the recovery journal of what was sent before (chapters P, C, M, W, N, T,
/// A and the system journal's X; `JournalHistory`), trimmed by the peer's receiver feedback;
/// after a pause, a journal-only
/// guard packet (`sendGuards(now:)`, also on each tick) lets the peer repair a lost last packet.
///
/// MIDI: packets are checked by sequence number: duplicates and late packets are dropped. A gap
/// (lost packets) is repaired from the recovery journal of the packet after it, before that
/// packet's own commands (RFC 4696 §7): notes the sender released are released, notes it holds
/// and that were missed are started, programs, controllers, parameters, the wheel and pressures
/// set to the sender's, missed SysEx sent (`MIDIChannelStates.repairs(from:)`). The journal is read only after a gap, never
/// replayed otherwise. Where no journal covers the gap (none sent, a checkpoint after the loss,
/// a malformed one), the session's sounding notes and sustain pedal are released instead
/// (note-offs, CC 64 off), so nothing is left stuck.
/// SysEx may come whole or in segments across packets (`F0…F0`, `F7…F0`, `F7…F7`; `F4`
/// cancels). Each message is stamped with its packet's arrival time plus its delta time (100 µs
/// ticks, at most 20 ms honoured), and stamps never go back, so a queue fed in output order stays
/// in time order. A session that ends releases its notes too. Malformed packets are counted
/// (`malformedCount`) and dropped; parsing never traps.
///
/// It does not open sockets, read a clock, resolve names or keep a history of ended sessions (its
/// outputs' snapshots do that for the listener); it repairs from journals' chapters P, C, M, W,
/// N, T and A and the system journal's chapter X, not from chapter E or system chapters D, V, Q, F.
public struct RTPMIDISessionMachine: Sendable {
    /// Which of a participant's two UDP ports a datagram came to, or is sent from.
    public enum Port: Hashable, Sendable {
        /// The first port of the pair: invitations, `BY`, receiver feedback.
        case control
        /// The port after it: invitations again, clock synchronization, RTP-MIDI packets.
        case data
    }

    /// What the machine asks of its driver, in the order it happened.
    public enum Output: Equatable, Sendable {
        /// Send `bytes` from our `port` (control or data) to `address`.
        case send(bytes: [UInt8], to: RTPMIDIAddress, from: Port)
        /// A MIDI message, its time (a `MIDITimestamp`, nanoseconds) and its session's source tag
        /// (one per session, for `MIDIEventQueue.push`).
        case midi(MIDIMessage, time: UInt64, source: UInt16)
        /// A session's state after a change (its counters, or connected or not).
        case session(RTPMIDIListener.Session)
        /// What a session's stream had left in effect when it ended (`ssrc` its peer's), just
        /// before its notes and pedal were released.
        case ended(ssrc: UInt32, state: MIDIChannelStates)
        /// A line for a log: "connected: NAME (ADDRESS)", "ended: …", "timed out: …",
        /// "refused: NAME (ADDRESS)", "refused by ADDRESS", "no answer from ADDRESS",
        /// "ended by ADDRESS". The peer's NAME is escaped (`PrintableText.escaped(_:)`): the line
        /// is safe to print as it is.
        case event(String)
    }

    /// Invitations are sent this many times, once a tick, before giving up.
    public static let invitationAttempts = 10
    /// Clock synchronization of the sessions this side opened, every so many nanoseconds.
    public static let syncInterval: UInt64 = 10_000_000_000

    /// The session name offered to peers.
    public let name: String
    /// The addresses whose peers may join (by the address an invitation comes from); empty:
    /// anyone.
    public let allow: [RTPMIDIAddressRange]
    /// A session that sends nothing (no clock sync, no data) for this long is ended.
    public let sessionTimeout: Duration
    /// Our synchronization source identifier, on both ports.
    public let ssrc: UInt32
    /// Datagrams that could not be parsed, or that came where they make no sense (dropped): for
    /// no session, or for a session from another endpoint than its peer's.
    public internal(set) var malformedCount = 0

    /// An open or opening session with a peer, by the SSRC of the peer's control port.
    var peers: [UInt32: Peer] = [:]
    /// Sessions this side is opening, by their token.
    var invitations: [UInt32: Invitation] = [:]
    /// The last source tag given to a session.
    var nextTag: UInt16 = 0x4000
    /// The latest time stamped on a message (stamps never go back).
    var lastStamp: UInt64 = 0
    var random: SplitMix64
    let timeout: UInt64
    var output: [Output] = []
    /// What this side has sent its sessions (their channels' state): a peer that joins later gets
    /// it first (`seed`).
    var sent = MIDIChannelStates()

    struct Peer: Sendable {
        var session: RTPMIDIListener.Session
        var control: RTPMIDIAddress
        var data: RTPMIDIAddress?
        var token: UInt32
        var lastSequence: UInt16?
        var lastFeedbackSequence: UInt16?
        var lastHeard: UInt64
        var sounding: Set<UInt16> = []  // channel << 8 | note
        var sustained: Set<UInt8> = []
        /// What the session's stream left in effect, to repair from a journal.
        var state = MIDIChannelStates()
        var sysEx: [UInt8]?
        var tag: UInt16
        /// When this side opened the session: the last clock sync it started.
        var lastSync: UInt64?
        /// What this side sends the peer: its next sequence number, the journal's history, and
        /// when it last sent (for guard packets).
        var outgoing: Outgoing?
    }

    /// The stream this side sends a peer.
    struct Outgoing: Sendable {
        var sequence: UInt16
        var history: JournalHistory
        var lastSent: UInt64 = 0
        /// Whether a packet or a guard went out since the last change (no guard is due then).
        var isGuarded = true

        init(sequence: UInt16) {
            self.sequence = sequence
            history = JournalHistory(firstSequence: sequence)
        }
    }

    /// A session this side is opening: invited on the control port, then on the data port.
    struct Invitation: Sendable {
        var control: RTPMIDIAddress
        var data: RTPMIDIAddress
        var onData = false
        var attempts = 1
        var peerSSRC: UInt32 = 0
        var peerName = ""
    }

    /// - Parameters:
    ///   - name: the session name offered to peers.
    ///   - allow: the addresses whose peers may join (empty: anyone).
    ///   - sessionTimeout: how long a silent session lasts.
    ///   - seed: seeds the generator of our SSRC and invitation tokens (fixed in tests, for
    ///     outputs that repeat; random by default).
    public init(
        name: String, allow: [RTPMIDIAddressRange] = [], sessionTimeout: Duration = .seconds(60),
        seed: UInt64 = .random(in: 0...UInt64.max)
    ) {
        self.name = name
        self.allow = allow
        self.sessionTimeout = sessionTimeout
        let components = sessionTimeout.components
        timeout =
            UInt64(max(0, components.seconds)) * 1_000_000_000 + UInt64(max(0, components.attoseconds) / 1_000_000_000)
        random = SplitMix64(seed: seed)
        ssrc = UInt32.random(in: 1...UInt32.max, using: &random)
    }

    /// The sessions open or opening now (ended ones are gone), by SSRC.
    public var sessions: [RTPMIDIListener.Session] { peers.values.map(\.session).sorted { $0.ssrc < $1.ssrc } }

    /// Hands the outputs to `body` in order, then forgets them (keeping their storage).
    public mutating func drain(_ body: (Output) -> Void) {
        for item in output { body(item) }
        output.removeAll(keepingCapacity: true)
    }

    /// The outputs so far, in order, forgotten here (for tests; a driver uses `drain(_:)`).
    public mutating func takeOutput() -> [Output] {
        defer { output = [] }
        return output
    }

    /// A datagram from `address` to our control or data port, which arrived at `arrival` (a
    /// `MIDITimestamp`): a session command (`FF FF …`) on either port, or an RTP-MIDI packet on
    /// the data port.
    public mutating func receive(_ bytes: [UInt8], from address: RTPMIDIAddress, on port: Port, at arrival: UInt64) {
        if AppleMIDICommand.isCommand(bytes) {
            do {
                let command = try AppleMIDICommand(parsing: bytes)
                handle(command, from: address, on: port, at: arrival)
            } catch {
                malformedCount += 1
            }
            return
        }
        guard port == .data else {
            malformedCount += 1
            return
        }
        do {
            let packet = try RTPMIDIPacket(parsing: bytes)
            handle(packet, from: address, at: arrival)
        } catch {
            malformedCount += 1
        }
    }

    /// Opens a session to a peer's control port (its data port is the next one), as the initiator:
    /// the first invitation goes out now, the others on the ticks that follow.
    public mutating func invite(_ control: RTPMIDIAddress) {
        var token = UInt32.random(in: 1...UInt32.max, using: &random)
        while invitations[token] != nil { token = UInt32.random(in: 1...UInt32.max, using: &random) }
        invitations[token] = Invitation(control: control, data: control.nextPort)
        send(.invitation(token: token, ssrc: ssrc, name: name), to: control, from: .control)
    }

    /// What depends on time, about once a second: invitations repeated or given up, clock
    /// synchronization of the sessions this side opened, timeouts, receiver feedback.
    public mutating func tick(now: UInt64) {
        for (token, invitation) in invitations {
            if invitation.attempts >= Self.invitationAttempts {
                invitations[token] = nil
                output.append(.event("no answer from \(invitation.control)"))
                continue
            }
            invitations[token]?.attempts += 1
            send(
                .invitation(token: token, ssrc: ssrc, name: name),
                to: invitation.onData ? invitation.data : invitation.control,
                from: invitation.onData ? .data : .control)
        }
        for (peerSSRC, peer) in peers {
            guard let last = peer.lastSync, let data = peer.data, now &- last >= Self.syncInterval else { continue }
            peers[peerSSRC]?.lastSync = now
            startSync(with: data, at: now)
        }
        for (peerSSRC, peer) in peers {
            if now &- peer.lastHeard > timeout {
                end(peerSSRC, reason: "timed out", at: now)
                continue
            }
            if let sequence = peer.lastSequence, sequence != peer.lastFeedbackSequence {
                // The 16-bit sequence number in the upper half, as Apple's peers expect.
                send(.receiverFeedback(ssrc: ssrc, sequence: UInt32(sequence) << 16), to: peer.control, from: .control)
                peers[peerSSRC]?.lastFeedbackSequence = sequence
            }
        }
        sendGuards(now: now, repeating: true)
    }

    /// Ends every session (`BY` to each, their notes released) and every invitation the control
    /// port accepted (`BY` too); invitations not answered yet are dropped.
    public mutating func endAll(now: UInt64) {
        for (token, invitation) in invitations where invitation.onData {
            send(.end(token: token, ssrc: ssrc), to: invitation.control, from: .control)
        }
        invitations.removeAll()
        // A last guard to every peer whose journal holds what it has not acknowledged (a lost
        // last packet repaired), then BY.
        sendGuards(now: now, force: true)
        for (peerSSRC, peer) in peers {
            send(.end(token: peer.token, ssrc: ssrc), to: peer.control, from: .control)
            end(peerSSRC, reason: "ended", at: now)
        }
    }

    // MARK: Session commands

    mutating func send(_ command: AppleMIDICommand, to address: RTPMIDIAddress, from port: Port) {
        output.append(.send(bytes: command.bytes, to: address, from: port))
    }

    /// Whether a peer at `address` may join (its session name has no say).
    func allowed(_ address: RTPMIDIAddress) -> Bool {
        allow.isEmpty || allow.contains { $0.contains(address.host) }
    }

    /// Whether a datagram from `address` comes from the peer of the session `peer`: its control
    /// port or its data port.
    func isPeer(_ peer: Peer, _ address: RTPMIDIAddress) -> Bool {
        address == peer.control || address == peer.data
    }

    mutating func handle(_ command: AppleMIDICommand, from address: RTPMIDIAddress, on port: Port, at arrival: UInt64) {
        switch command {
        case .invitation(let token, let peerSSRC, let peerName):
            invited(token: token, peerSSRC: peerSSRC, name: peerName, from: address, on: port, at: arrival)
        case .end(let token, let peerSSRC):
            // (A peer may also end a session this side is still opening.) Only from the peer's
            // own ports: a BY from anywhere else ends nothing.
            for (pending, invitation) in invitations where pending == token || invitation.peerSSRC == peerSSRC {
                guard address == invitation.control || address == invitation.data else {
                    malformedCount += 1
                    continue
                }
                invitations[pending] = nil
                output.append(.event("ended by \(invitation.control)"))
            }
            guard let peer = peers[peerSSRC] else { return }
            guard isPeer(peer, address) else {
                malformedCount += 1
                return
            }
            end(peerSSRC, reason: "ended", at: arrival)
        case .clockSync(let peerSSRC, let count, let timestamps):
            // (A peer that gives its data port an SSRC of its own, as pymidi does, is found by the
            // address its data comes from.) A session's SSRC from another address is not its peer.
            guard port == .data else { return }
            if let peer = peers[peerSSRC], peer.data != address {
                malformedCount += 1
                return
            }
            guard let key = peers[peerSSRC] != nil ? peerSSRC : peers.first(where: { $0.value.data == address })?.key
            else { return }
            peers[key]?.lastHeard = arrival
            let clock = arrival / 100_000  // 100 µs ticks
            if count == 0 {
                send(.clockSync(ssrc: ssrc, count: 1, timestamps: [timestamps[0], clock, 0]), to: address, from: .data)
            } else if count == 1 {
                // The answer to a sync this side started: the third leg closes it.
                send(
                    .clockSync(ssrc: ssrc, count: 2, timestamps: [timestamps[0], timestamps[1], clock]), to: address,
                    from: .data)
            }
        case .accept(let token, let peerSSRC, let peerName):
            accepted(token: token, peerSSRC: peerSSRC, name: peerName, from: address, on: port, at: arrival)
        case .reject(let token, _):
            guard let invitation = invitations[token] else { return }
            // Only the peer invited refuses: from the port this side invited.
            guard address == (invitation.onData ? invitation.data : invitation.control) else {
                malformedCount += 1
                return
            }
            invitations[token] = nil
            output.append(.event("refused by \(invitation.control)"))
        case .receiverFeedback(let peerSSRC, let sequence):
            // Apple's peers put the 16-bit sequence number in the upper half; some the whole.
            let acknowledged = sequence > 0xFFFF ? UInt16(sequence >> 16) : UInt16(sequence)
            guard let peer = peers[peerSSRC] else { return }
            guard isPeer(peer, address) else {
                malformedCount += 1
                return
            }
            // Only for a packet this side sent (not one in the future: a misread field).
            guard let outgoing = peer.outgoing,
                Int16(bitPattern: acknowledged &- (outgoing.sequence &- 1)) <= 0
            else { return }
            peers[peerSSRC]?.outgoing?.history.acknowledge(through: acknowledged)
        case .bitrateLimit:
            break
        }
    }

    /// A peer invites us: on the control port first (the session is half open, bound to that
    /// address), then on the data port, from the same host (it opens, bound to that address too).
    /// An invitation naming a session's SSRC from other ports than the ones it is bound to is
    /// refused, and the session left as it was.
    mutating func invited(
        token: UInt32, peerSSRC: UInt32, name peerName: String, from address: RTPMIDIAddress, on port: Port,
        at arrival: UInt64
    ) {
        guard allowed(address) else {
            send(.reject(token: token, ssrc: ssrc), to: address, from: port)
            output.append(.event("refused: \(PrintableText.escaped(peerName)) (\(address))"))
            return
        }
        if port == .control {
            if let peer = peers[peerSSRC], peer.control != address {
                // Another endpoint claims the session's SSRC.
                malformedCount += 1
                send(.reject(token: token, ssrc: ssrc), to: address, from: .control)
                return
            }
            if peers[peerSSRC] == nil {
                nextTag &+= 1
                peers[peerSSRC] = Peer(
                    session: RTPMIDIListener.Session(
                        name: peerName, address: address.description, ssrc: peerSSRC, isConnected: false,
                        messageCount: 0, lastArrival: 0, lostPackets: 0),
                    control: address, token: token, lastHeard: arrival, tag: nextTag)
            }
            peers[peerSSRC]?.token = token
            peers[peerSSRC]?.lastHeard = arrival
            send(.accept(token: token, ssrc: ssrc, name: name), to: address, from: .control)
            return
        }
        guard var peer = peers[peerSSRC] else {
            // A data-port invitation without the control one first.
            send(.reject(token: token, ssrc: ssrc), to: address, from: .data)
            return
        }
        // From the control port's host, and once bound, from the same data port.
        guard address.host == peer.control.host, peer.data == nil || peer.data == address else {
            malformedCount += 1
            send(.reject(token: token, ssrc: ssrc), to: address, from: .data)
            return
        }
        peer.data = address
        peer.lastHeard = arrival
        let wasConnected = peer.session.isConnected
        peer.session.isConnected = true
        peers[peerSSRC] = peer
        send(.accept(token: token, ssrc: ssrc, name: name), to: address, from: .data)
        if !wasConnected {
            publish(peer, event: "connected: \(PrintableText.escaped(peer.session.name)) (\(peer.session.address))")
            seed(peerSSRC, at: arrival)
        }
    }

    /// A peer accepted an invitation of ours: on to the data port, or the session is open. Only
    /// an answer from the port this side invited counts.
    mutating func accepted(
        token: UInt32, peerSSRC: UInt32, name peerName: String, from address: RTPMIDIAddress, on port: Port,
        at arrival: UInt64
    ) {
        guard var invitation = invitations[token], invitation.onData == (port == .data) else { return }
        guard address == (port == .data ? invitation.data : invitation.control) else {
            malformedCount += 1
            return
        }
        if port == .control {
            invitation.onData = true
            invitation.attempts = 1
            invitation.peerSSRC = peerSSRC
            invitation.peerName = peerName
            invitations[token] = invitation
            send(.invitation(token: token, ssrc: ssrc, name: name), to: invitation.data, from: .data)
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
            session: RTPMIDIListener.Session(
                name: invitation.peerName, address: invitation.control.description, ssrc: key, isConnected: true,
                messageCount: 0, lastArrival: 0, lostPackets: 0),
            control: invitation.control, data: invitation.data, token: token, lastHeard: arrival, tag: nextTag,
            lastSync: arrival)
        peers[key] = peer
        publish(peer, event: "connected: \(PrintableText.escaped(peer.session.name)) (\(peer.session.address))")
        startSync(with: invitation.data, at: arrival)
        seed(key, at: arrival)
    }

    /// The first leg of a clock synchronization (count 0).
    mutating func startSync(with data: RTPMIDIAddress, at now: UInt64) {
        send(.clockSync(ssrc: ssrc, count: 0, timestamps: [now / 100_000, 0, 0]), to: data, from: .data)
    }

    mutating func end(_ peerSSRC: UInt32, reason: String, at now: UInt64) {
        guard var peer = peers.removeValue(forKey: peerSSRC) else { return }
        output.append(.ended(ssrc: peer.session.ssrc, state: peer.state))
        release(&peer, at: now)
        peer.session.isConnected = false
        publish(peer, event: "\(reason): \(PrintableText.escaped(peer.session.name)) (\(peer.session.address))")
    }

    mutating func publish(_ peer: Peer, event: String?) {
        output.append(.session(peer.session))
        if let event { output.append(.event(event)) }
    }
}

/// A small, fast, seedable generator (SplitMix64), so a session's SSRC and tokens can repeat in
/// tests. Not for secrets.
struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
