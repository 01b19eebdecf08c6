import CALSASequencer
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Live MIDI from the ALSA sequencer: a client (`Pianola` by default) with one writable,
/// subscribable port that other programs and keyboards connect to (`aconnect`, or `connect(_:)`
/// from this side), read on its own thread.
///
/// Every message carries its arrival time (`MIDITimestamp`): the kernel stamps it as it is
/// delivered to our port (a sequencer queue's real-time clock, mapped to CLOCK_MONOTONIC), so the
/// stamp does not depend on when the input thread wakes up. It is decoded through `MIDIStreamDecoder`
/// (one per source, so SysEx split across events is reassembled) and pushed into `queue`, which a
/// `LiveMIDIScheduler` drains on the audio thread. Sources named with `connect(_:)` are connected
/// again when they come back (a keyboard unplugged and plugged in); with `autoconnect`, every
/// source that appears is connected.
///
/// Every change is reported: a source connected, disconnected or that cannot be connected shows in
/// `sources` (its `failure` says why) and as a line in `takeEvents()`. It does not retry a
/// subscription that failed until the source appears again, and does not decide what a user sees:
/// the caller shows the events.
public final class ALSASequencerInput: @unchecked Sendable {
    /// One connected (or remembered) source and its activity.
    public struct Source: Hashable, Sendable {
        /// `CLIENT-NAME:PORT-NAME (CLIENT:PORT)`, or `CLIENT:PORT` when the port cannot be read.
        public var name: String
        /// `CLIENT:PORT`.
        public var address: String
        /// Subscribed now (messages from it arrive).
        public var isConnected: Bool
        /// Messages received from it.
        public var messageCount: Int
        /// Arrival time of its last message (`MIDITimestamp`), 0 if none yet.
        public var lastArrival: UInt64
        /// Why the last subscription to it failed (the sequencer's reason); nil once it connects.
        public var failure: String?

        /// Makes a source's entry; `failure` stays nil unless a subscription to it failed.
        public init(
            name: String, address: String, isConnected: Bool, messageCount: Int, lastArrival: UInt64,
            failure: String? = nil
        ) {
            self.name = name
            self.address = address
            self.isConnected = isConnected
            self.messageCount = messageCount
            self.lastArrival = lastArrival
            self.failure = failure
        }
    }

    /// Where the messages go (to the audio thread).
    public let queue: MIDIEventQueue
    /// Our port's address, `CLIENT:PORT`.
    public let address: String
    /// Connect every source that appears (and those present at `start()`).
    public var autoconnect: Bool {
        get { state.withLock { $0.autoconnect } }
        set { state.withLock { $0.autoconnect = newValue } }
    }
    /// Called on the input thread with each message and its arrival time (for recording, meters).
    public var messageHandler: (@Sendable (MIDIMessage, UInt64) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    private struct State {
        var autoconnect = false
        /// Clients autoconnect leaves alone (`neverAutoconnect(client:)`).
        var notAutoconnected: Set<Int> = []
        var handler: (@Sendable (MIDIMessage, UInt64) -> Void)?
        /// Keyed by `client << 8 | port`.
        var sources: [Int: Source] = [:]
        /// Names given to `connect`, tried again whenever a port appears.
        var wanted: [String] = []
        var overruns = 0
        var failure: String?
        /// Lines for `takeEvents()`.
        var events: [String] = []

        /// Marks a source disconnected; an event if it was connected.
        mutating func disconnect(_ key: Int) {
            guard let source = sources[key], source.isConnected else { return }
            sources[key]?.isConnected = false
            events.append("disconnected: \(source.name)")
        }
    }

    private let seq: OpaquePointer
    private let client: Int
    private let state = Mutex(State())
    private let running = Atomic<Bool>(false)
    private var thread: SystemThread?
    private var decoders: [Int: MIDIStreamDecoder] = [:]  // input thread only

    /// Opens the sequencer as `clientName` with a port named `portName`.
    public init(
        clientName: String = "Pianola", portName: String = "Input", queue: MIDIEventQueue = MIDIEventQueue()
    ) throws(MIDIIOError) {
        var handle: OpaquePointer?
        let result = pianola_seq_open(clientName, portName, &handle)
        guard result == 0, let handle else { throw .sequencerUnavailable(reason: Self.reason(result)) }
        seq = handle
        client = Int(pianola_seq_client(handle))
        address = "\(client):\(pianola_seq_port(handle))"
        self.queue = queue
    }

    deinit {
        stop()
        pianola_seq_close(seq)
    }

    /// Every port of the sequencer (sources and destinations), from a short-lived client.
    public static func ports() throws(MIDIIOError) -> [MIDISequencerPort] {
        var handle: OpaquePointer?
        let result = pianola_seq_open("Pianola (listing)", "unused", &handle)
        guard result == 0, let handle else { throw .sequencerUnavailable(reason: reason(result)) }
        defer { pianola_seq_close(handle) }
        let own = Int(pianola_seq_client(handle))
        return listPorts(handle).filter { $0.client != own }
    }

    private static func listPorts(_ handle: OpaquePointer) -> [MIDISequencerPort] {
        var infos = [pianola_seq_port_info](repeating: pianola_seq_port_info(), count: 256)
        let count = Int(pianola_seq_list_ports(handle, &infos, Int32(infos.count)))
        return infos.prefix(max(0, min(count, infos.count))).map(MIDISequencerPort.init)
    }

    /// Connects a source: `CLIENT:PORT`, a client number, or a client name (or its beginning),
    /// as `aconnect` takes them. It is remembered: when the source goes away and comes back, it is
    /// connected again. Throws if nothing matches now (call with `waitingForIt` to accept a source
    /// that is not there yet). Before `start()` the name is only checked: the subscription is made
    /// when the input starts, so nothing arrives before the audio runs.
    public func connect(_ source: String, waitingForIt: Bool = false) throws(MIDIIOError) {
        state.withLock { if !$0.wanted.contains(source) { $0.wanted.append(source) } }
        var client: Int32 = 0
        var port: Int32 = 0
        let parsed = pianola_seq_parse_address(seq, source, &client, &port)
        guard parsed == 0 else {
            if waitingForIt { return }
            throw .unknownSource(source, reason: "no such sequencer port")
        }
        guard running.load(ordering: .relaxed) else { return }
        if let error = subscribe(client: Int(client), port: Int(port), as: source) { throw error }
    }

    /// Keeps autoconnect from connecting `client`'s ports: a client of the same program that
    /// sends what comes in back out (MIDI thru) would otherwise feed the input its own messages.
    public func neverAutoconnect(client: Int) {
        state.withLock { _ = $0.notAutoconnected.insert(client) }
    }

    /// Messages lost because the kernel's input buffer overflowed.
    public var overrunCount: Int { state.withLock { $0.overruns } }
    /// Why the input thread stopped, if it failed.
    public var failure: String? { state.withLock { $0.failure } }
    /// The sources, connected or remembered (and those that could not be connected), in address
    /// order.
    public var sources: [Source] {
        state.withLock { $0.sources.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Source events since the last call, oldest first, for a status line or a log:
    /// "connected: NAME (CLIENT:PORT)", "disconnected: NAME (CLIENT:PORT)" and
    /// "cannot connect: NAME (CLIENT:PORT): REASON" (a subscription refused, at `start()`, on a
    /// reconnection or by autoconnect). The same shape as `RTPMIDIListener.takeEvents()`. Events
    /// are kept until taken.
    public func takeEvents() -> [String] {
        state.withLock { state in
            let events = state.events
            state.events.removeAll()
            return events
        }
    }

    /// Starts the input thread and connects the sources asked for (with `autoconnect`, every source
    /// present now).
    public func start() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        for source in state.withLock({ $0.wanted }) {
            var client: Int32 = 0
            var port: Int32 = 0
            // (A failure is on the source and in the events: the input runs for the others.)
            if pianola_seq_parse_address(seq, source, &client, &port) == 0 {
                subscribe(client: Int(client), port: Int(port), as: source)
            }
        }
        if autoconnect {
            let excluded = state.withLock { $0.notAutoconnected }
            for port in Self.listPorts(seq)
            where port.isAutoconnectCandidate(excludingClient: client) && !excluded.contains(port.client) {
                subscribe(client: port.client, port: port.port, as: nil)
            }
        }
        do { thread = try SystemThread(name: "pianola MIDI in") { [self] in run() } } catch {
            running.store(false, ordering: .relaxed)
            state.withLock { $0.failure = "cannot start the MIDI input thread (\(error))" }
        }
    }

    /// Stops the input thread.
    public func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        pianola_seq_wake(seq)
        thread?.join()
        thread = nil
    }

    /// Subscribes to a source. A failure is recorded on its `Source` and in the events, and
    /// returned (for `connect(_:)` to throw).
    @discardableResult
    private func subscribe(client: Int, port: Int, as requested: String?) -> MIDIIOError? {
        let key = client << 8 | port
        if state.withLock({ $0.sources[key]?.isConnected == true }) { return nil }
        let result = pianola_seq_connect_from(seq, Int32(client), Int32(port))
        // EBUSY: the subscription exists already (the source connected itself to us).
        guard result == 0 || result == -EBUSY else {
            let reason = Self.reason(result)
            let name = portName(client: client, port: port)
            state.withLock {
                var source =
                    $0.sources[key]
                    ?? Source(
                        name: name, address: "\(client):\(port)", isConnected: false, messageCount: 0, lastArrival: 0)
                source.name = name
                source.failure = reason
                $0.sources[key] = source
                $0.events.append("cannot connect: \(name): \(reason)")
            }
            return .cannotConnect(requested ?? "\(client):\(port)", reason: reason)
        }
        noteConnected(client: client, port: port)
        return nil
    }

    /// `CLIENT-NAME:PORT-NAME (CLIENT:PORT)`, or `CLIENT:PORT` when the port cannot be read.
    private func portName(client: Int, port: Int) -> String {
        var info = pianola_seq_port_info()
        return pianola_seq_port_info_of(seq, Int32(client), Int32(port), &info) == 0
            ? MIDISequencerPort(info).description : "\(client):\(port)"
    }

    private func noteConnected(client: Int, port: Int) {
        let key = client << 8 | port
        let name = portName(client: client, port: port)
        state.withLock {
            var source =
                $0.sources[key]
                ?? Source(name: name, address: "\(client):\(port)", isConnected: false, messageCount: 0, lastArrival: 0)
            if !source.isConnected { $0.events.append("connected: \(name)") }
            source.name = name
            source.isConnected = true
            source.failure = nil
            $0.sources[key] = source
        }
    }

    private func run() {
        var event = pianola_seq_event()
        var lastResync = MIDITimestamp.now()
        while running.load(ordering: .relaxed) {
            // The kernel's arrival clock and CLOCK_MONOTONIC are compared again every few seconds.
            if MIDITimestamp.now() &- lastResync > 5_000_000_000 {
                pianola_seq_resync_clock(seq)
                lastResync = MIDITimestamp.now()
            }
            let result = pianola_seq_read(seq, 500, &event)
            if result == 0 { continue }
            if result < 0 {
                let reason = Self.reason(result)
                state.withLock { $0.failure = "ALSA sequencer: read failed: \(reason)" }
                return
            }
            handle(event)
        }
    }

    private func handle(_ event: pianola_seq_event) {
        let key = Int(event.source_client) << 8 | Int(event.source_port)
        switch Int32(event.kind) {
        case Int32(PIANOLA_SEQ_MIDI):
            guard let bytes = event.bytes else { return }
            let arrival = event.arrival_ns
            let handler = state.withLock { state -> (@Sendable (MIDIMessage, UInt64) -> Void)? in
                state.sources[key]?.messageCount += 1
                state.sources[key]?.lastArrival = arrival
                return state.handler
            }
            var decoder = decoders[key] ?? MIDIStreamDecoder(maximumSysExLength: MIDIEventQueue.maximumMessageLength)
            let queue = self.queue
            decoder.decode(UnsafeBufferPointer(start: bytes, count: Int(event.length))) { message in
                queue.push(message, arrival: arrival, source: UInt16(truncatingIfNeeded: key))
                handler?(message, arrival)
            }
            decoders[key] = decoder
        // (The announcements tell of every subscription in the system: only those to our port count.)
        case Int32(PIANOLA_SEQ_SUBSCRIBED) where Int(event.destination_client) == client:
            let sender = Int(event.address_client)
            if sender != self.client && sender != 0 { noteConnected(client: sender, port: Int(event.address_port)) }
        case Int32(PIANOLA_SEQ_UNSUBSCRIBED) where Int(event.destination_client) == client:
            let sender = Int(event.address_client) << 8 | Int(event.address_port)
            state.withLock { $0.disconnect(sender) }
        case Int32(PIANOLA_SEQ_PORT_START):
            portAppeared(client: Int(event.address_client), port: Int(event.address_port))
        case Int32(PIANOLA_SEQ_PORT_EXIT):
            let gone = Int(event.address_client) << 8 | Int(event.address_port)
            decoders[gone] = nil
            state.withLock { $0.disconnect(gone) }
        case Int32(PIANOLA_SEQ_CLIENT_EXIT):
            let client = Int(event.address_client)
            state.withLock {
                for key in $0.sources.keys.sorted() where key >> 8 == client { $0.disconnect(key) }
            }
        case Int32(PIANOLA_SEQ_OVERRUN):
            state.withLock { $0.overruns += 1 }
        default:
            break
        }
    }

    /// A port appeared: connect it if it was asked for by name, or with autoconnect.
    private func portAppeared(client: Int, port: Int) {
        guard client != self.client else { return }
        let (wanted, autoconnect) = state.withLock { ($0.wanted, $0.autoconnect) }
        for source in wanted {
            var wantedClient: Int32 = 0
            var wantedPort: Int32 = 0
            if pianola_seq_parse_address(seq, source, &wantedClient, &wantedPort) == 0,
                Int(wantedClient) == client, Int(wantedPort) == port
            {
                subscribe(client: client, port: port, as: source)
                return
            }
        }
        guard autoconnect else { return }
        var info = pianola_seq_port_info()
        guard pianola_seq_port_info_of(seq, Int32(client), Int32(port), &info) == 0,
            MIDISequencerPort(info).isAutoconnectCandidate(excludingClient: self.client),
            !state.withLock({ $0.notAutoconnected.contains(client) })
        else { return }
        subscribe(client: client, port: port, as: nil)
    }

    static func reason(_ code: Int32) -> String { String(cString: pianola_seq_strerror(code)) }
}
