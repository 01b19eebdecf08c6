import CALSASequencer
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// MIDI out through the ALSA sequencer: a client (`Pianola` by default) with one port others can
/// read from and subscribe to, and a sequencer queue of its own on which every message is
/// scheduled for the time it should be heard (`send(_:at:to:)`, CLOCK_MONOTONIC). The kernel
/// delivers it then, so its timing does not depend on when Pianola's threads run. The kernel
/// hands scheduled events over on its queue timer's ticks, `timerFrequency` a second: 1 kHz by
/// default, as `aplaymidi`'s queue (a finer tick, up to 6250 Hz, times events more finely on a
/// machine that keeps up with the interrupts; in the emulated VM of the device tests, 2 kHz and
/// more made the machine stall and some events late by milliseconds).
///
/// Destinations are other clients' ports (a USB MIDI interface, a soft synth, `Midi Through`):
/// `connect(_:)` subscribes one to our port. A message goes to one destination, or to every
/// subscriber of our port (those connected here and those that subscribed themselves). A
/// destination that goes away is reported (`takeEvents()`), skipped while it is gone and connected
/// again when a port of the same name comes back.
///
/// ```swift
/// let output = try ALSASequencerOutput()
/// let synth = try output.connect("USB MIDI")
/// output.send(.noteOn(channel: 0, note: 60, velocity: 100), at: MIDITimestamp.now() + 5_000_000, to: synth)
/// output.flush()
/// ```
///
/// Calls are serialized by a lock (alsa-lib's handle is not thread-safe); it is for a sending
/// thread, not for a real-time one.
public final class ALSASequencerOutput: @unchecked Sendable {
    /// A destination asked for, and where it is now.
    public struct Destination: Hashable, Sendable, CustomStringConvertible {
        /// Its index among this output's destinations (what `send(_:at:to:)` takes).
        public let index: Int
        /// The name or address it was asked for with (`connect(_:)`).
        public let requested: String
        /// `CLIENT-NAME:PORT-NAME (CLIENT:PORT)` of the port it was last found at.
        public var name: String
        /// The sequencer client and port it was last found at.
        public var client: Int
        /// The port within `client`.
        public var port: Int
        /// Whether it is subscribed to our port (gets what goes to every subscriber).
        public let isSubscribed: Bool
        /// Whether it is there now (and subscribed, when it is to be) (false once it went away, until it comes back).
        public var isConnected: Bool
        /// Messages sent to it.
        public var messageCount: Int

        public var description: String { name }
    }

    /// Our port's address, `CLIENT:PORT`.
    public let address: String
    /// Our client's number.
    public let client: Int
    /// How often the queue's timer ticks (events leave on its ticks), in Hz.
    public let timerFrequency: Int

    private let seq: OpaquePointer
    /// Serializes the calls on `seq`; true once it is closed.
    private let handleClosed = Mutex(false)
    /// Serializes the reading and handling of announcements.
    private let announcements = Mutex(())
    private struct State {
        var destinations: [Destination] = []
        var events: [String] = []
        var failedSends = 0
        var closed = false
        var nextResync: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Runs `body` with the open handle, serialized (alsa-lib's handle is not thread-safe);
    /// `closedValue` once closed.
    private func withHandle<Result: Sendable>(_ closedValue: Result, _ body: (OpaquePointer) -> Result) -> Result {
        handleClosed.withLock { closed in closed ? closedValue : body(seq) }
    }

    /// Opens a client named `clientName` with an output port `portName` and a queue ticking at
    /// `timerFrequency` Hz (clamped to 10…6250, the kernel's range; 1000 is the kernel's default).
    public init(
        clientName: String = "Pianola", portName: String = "out", timerFrequency frequencyAsked: Int = 1_000
    )
        throws(MIDIIOError)
    {
        var handle: OpaquePointer?
        let frequency = min(max(frequencyAsked, 10), 6_250)
        let result = pianola_seq_open_output(clientName, portName, Int32(frequency), &handle)
        guard result == 0, let handle else {
            throw .sequencerUnavailable(reason: ALSASequencerInput.reason(result))
        }
        seq = handle
        client = Int(pianola_seq_client(handle))
        address = "\(client):\(pianola_seq_port(handle))"
        timerFrequency = frequency
    }

    deinit {
        close()
    }

    /// Lets what is scheduled be delivered (a second at most), sends every destination All Notes
    /// Off and Reset All Controllers (`resetDevices`), and closes the client. Closing twice is harmless.
    public func close() {
        guard !state.withLock({ $0.closed }) else { return }
        let last = withHandle(0) { seq in pianola_seq_last_scheduled(seq) }
        let now = MIDITimestamp.now()
        if last > now { usleep(UInt32(min(last - now, 1_000_000_000) / 1_000)) }
        // The subscribers, and each destination that gets only what is sent to it.
        resetDevices()
        for destination in destinations where !destination.isSubscribed { resetDevices(destination.index) }
        state.withLock { $0.closed = true }
        handleClosed.withLock { closed in
            if !closed { pianola_seq_close(seq) }
            closed = true
        }
    }

    /// The ports that take MIDI (`isDestination`), but our own.
    public static func destinations() throws(MIDIIOError) -> [MIDISequencerPort] {
        try ALSASequencerInput.ports().filter(\.isDestination)
    }

    /// Finds a destination: `CLIENT:PORT`, a client number, or a client name (or its beginning),
    /// as `aconnect` takes them, and (`subscribing`, the default) subscribes it to our port, so
    /// that it gets what goes to every subscriber; unsubscribed, it gets only what is sent to it.
    /// Throws for a name that matches no port (the error lists the near matches) or a port that
    /// refuses the subscription. Asking again for the same port gives the destination already made.
    @discardableResult
    public func connect(_ requested: String, subscribing: Bool = true) throws(MIDIIOError) -> Destination {
        guard let (client, port) = resolve(requested) else {
            throw .unknownDestination(requested, nearMatches: Self.nearMatches(for: requested, in: ports()))
        }
        let name = portName(client: client, port: port)
        if let existing = state.withLock({ $0.destinations.first { $0.client == client && $0.port == port } }) {
            return existing
        }
        let result =
            subscribing ? withHandle(-ENODEV) { seq in pianola_seq_connect_to(seq, Int32(client), Int32(port)) } : 0
        // EBUSY: the subscription exists already (the destination subscribed to us itself).
        guard result == 0 || result == -EBUSY else {
            throw .cannotConnectDestination(requested, reason: ALSASequencerInput.reason(result))
        }
        return state.withLock { state in
            let destination = Destination(
                index: state.destinations.count, requested: requested, name: name, client: client, port: port,
                isSubscribed: subscribing, isConnected: true, messageCount: 0)
            state.destinations.append(destination)
            return destination
        }
    }

    /// The destinations connected with `connect(_:)`, in that order.
    public var destinations: [Destination] { state.withLock { $0.destinations } }

    /// Sends that failed (the sequencer refused them: a destination gone, its buffer full), and
    /// messages not sent because a number in them is out of MIDI's range.
    public var failedSendCount: Int { state.withLock { $0.failedSends } }

    /// Queues `message` for `time` (CLOCK_MONOTONIC nanoseconds; 0 or a past time: at once) to the
    /// destination at `index` (nil: every subscriber of our port). A destination that is gone is
    /// skipped. Call `flush()` to hand what is queued to the kernel. A message holding a number
    /// MIDI 1.0 cannot carry (see ``MIDIMessage/validated()``) is not sent, nor masked into another:
    /// it counts in ``failedSendCount``.
    public func send(_ message: MIDIMessage, at time: UInt64, to index: Int? = nil) {
        var target: (client: Int, port: Int) = (-1, 0)
        if let index {
            guard
                let found = state.withLock({ state -> (Int, Int)? in
                    guard state.destinations.indices.contains(index), state.destinations[index].isConnected else {
                        return nil
                    }
                    state.destinations[index].messageCount += 1
                    return (state.destinations[index].client, state.destinations[index].port)
                })
            else { return }
            target = found
        }
        guard let bytes = try? message.bytes else {
            state.withLock { $0.failedSends += 1 }
            return
        }
        let result = withHandle(-ENODEV) { seq in
            pianola_seq_send(seq, bytes, Int32(bytes.count), time, Int32(target.client), Int32(target.port))
        }
        if result < 0 { state.withLock { $0.failedSends += 1 } }
    }

    /// Hands what `send` queued to the kernel.
    public func flush() {
        let result = withHandle(-ENODEV) { seq in pianola_seq_drain(seq) }
        if result < 0 { state.withLock { $0.failedSends += 1 } }
    }

    /// Removes the messages scheduled and not yet delivered, but Note Offs (so that nothing is
    /// left sounding): what a stop that should be heard at once does before `resetDevices`.
    public func dropScheduled() {
        withHandle(()) { seq in _ = pianola_seq_drop_scheduled(seq) }
    }

    /// When the last message scheduled is delivered (CLOCK_MONOTONIC nanoseconds; 0 before any).
    public var lastScheduledTime: UInt64 { withHandle(0) { seq in pianola_seq_last_scheduled(seq) } }

    /// Sends All Notes Off (123) and Reset All Controllers (121) on every channel, at once, to
    /// the destination at `index` (nil: every subscriber): no note is left sounding on an
    /// external instrument, and its pedals, wheels and pressures are back at rest.
    public func resetDevices(_ index: Int? = nil) {
        guard !state.withLock({ $0.closed }) else { return }
        for channel in UInt8(0)..<16 {
            send(.controlChange(channel: channel, controller: 123, value: 0), at: 0, to: index)
            send(.controlChange(channel: channel, controller: 121, value: 0), at: 0, to: index)
        }
        flush()
    }

    /// What a sending thread calls between sends (every millisecond or so): follows the
    /// announcements (`followAnnouncements()`) and, every two seconds, measures again the offset between
    /// the queue's clock and CLOCK_MONOTONIC (the queue's timer may drift against it).
    public func maintain() {
        followAnnouncements()
        let now = MIDITimestamp.now()
        let due = state.withLock { state -> Bool in
            guard now >= state.nextResync else { return false }
            state.nextResync = now + 2_000_000_000
            return true
        }
        if due { withHandle(()) { seq in _ = pianola_seq_resync_clock(seq) } }
    }

    /// Reads the sequencer's announcements (never waits): a destination whose port or client went
    /// away is marked disconnected; one asked for by name whose port comes back is connected again.
    /// `takeEvents()` calls it.
    public func followAnnouncements() {
        // One thread at a time, in order: a port's exit and its return read by two threads could
        // otherwise be handled the wrong way round.
        announcements.withLock { _ in followAnnouncementsInOrder() }
    }

    private func followAnnouncementsInOrder() {
        var event = pianola_seq_event()
        while withHandle(0, { seq in pianola_seq_read(seq, 0, &event) }) == 1 {
            let client = Int(event.address_client)
            let port = Int(event.address_port)
            switch Int32(event.kind) {
            case Int32(PIANOLA_SEQ_PORT_EXIT), Int32(PIANOLA_SEQ_CLIENT_EXIT):
                let wholeClient = Int32(event.kind) == Int32(PIANOLA_SEQ_CLIENT_EXIT)
                state.withLock { state in
                    for index in state.destinations.indices
                    where state.destinations[index].isConnected && state.destinations[index].client == client
                        && (wholeClient || state.destinations[index].port == port)
                    {
                        state.destinations[index].isConnected = false
                        state.events.append("disconnected: \(state.destinations[index].name)")
                    }
                }
            case Int32(PIANOLA_SEQ_PORT_START):
                reconnect(client: client, port: port)
            default:
                break
            }
        }
    }

    /// Destination events since the last call, oldest first: "disconnected: NAME (CLIENT:PORT)",
    /// "connected: NAME (CLIENT:PORT)" (one that came back), "cannot connect: NAME: REASON".
    public func takeEvents() -> [String] {
        followAnnouncements()
        return state.withLock { state in
            let events = state.events
            state.events.removeAll()
            return events
        }
    }

    /// A port appeared: a destination that is gone and was asked for by a name that now finds
    /// this port is connected again.
    private func reconnect(client: Int, port: Int) {
        let missing = state.withLock { $0.destinations.filter { !$0.isConnected } }
        for destination in missing {
            guard let found = resolve(destination.requested), found == (client, port) else { continue }
            let name = portName(client: client, port: port)
            let result =
                destination.isSubscribed
                ? withHandle(-ENODEV) { seq in pianola_seq_connect_to(seq, Int32(client), Int32(port)) } : 0
            state.withLock { state in
                if result == 0 || result == -EBUSY {
                    state.destinations[destination.index].client = client
                    state.destinations[destination.index].port = port
                    state.destinations[destination.index].name = name
                    state.destinations[destination.index].isConnected = true
                    state.events.append("connected: \(name)")
                } else {
                    state.events.append("cannot connect: \(name): \(ALSASequencerInput.reason(result))")
                }
            }
        }
    }

    private func resolve(_ text: String) -> (Int, Int)? {
        var client: Int32 = 0
        var port: Int32 = 0
        let result = withHandle(-ENODEV) { seq in pianola_seq_parse_address(seq, text, &client, &port) }
        guard result == 0 else { return nil }
        // A port that exists (a client number alone parses to port 0, which may not).
        var info = pianola_seq_port_info()
        let exists = withHandle(-ENODEV) { seq in pianola_seq_port_info_of(seq, client, port, &info) }
        return exists == 0 ? (Int(client), Int(port)) : nil
    }

    private func ports() -> [MIDISequencerPort] {
        var infos = [pianola_seq_port_info](repeating: pianola_seq_port_info(), count: 256)
        let count = withHandle(0) { seq in Int(pianola_seq_list_ports(seq, &infos, Int32(infos.count))) }
        return infos.prefix(max(0, min(count, infos.count))).map(MIDISequencerPort.init)
            .filter { $0.isDestination && $0.client != client }
    }

    private func portName(client: Int, port: Int) -> String {
        var info = pianola_seq_port_info()
        let result = withHandle(-ENODEV) { seq in pianola_seq_port_info_of(seq, Int32(client), Int32(port), &info) }
        return result == 0 ? MIDISequencerPort(info).description : "\(client):\(port)"
    }

    /// The destinations whose client or port name is close to `requested` (a typo, another case,
    /// a part of the name), nearest first; every destination when none is.
    static func nearMatches(for requested: String, in ports: [MIDISequencerPort]) -> [String] {
        let wanted = requested.lowercased()
        let scored = ports.map { port -> (Int, String) in
            let names = [port.clientName, port.portName, "\(port.clientName):\(port.portName)"].map { $0.lowercased() }
            let contains = names.contains { $0.contains(wanted) || wanted.contains($0) }
            let distance = names.map { TextMatching.editDistance($0, wanted) }.min() ?? .max
            return (contains ? 0 : distance, port.description)
        }
        let near = scored.filter { $0.0 <= max(2, wanted.count / 3) }.sorted { $0.0 < $1.0 }.map(\.1)
        return near.isEmpty ? scored.map(\.1) : near
    }
}
