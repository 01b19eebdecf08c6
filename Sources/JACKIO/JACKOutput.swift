import AudioGraph
import CJACK
import MIDICore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Plays an engine through a JACK server (JACK 2, or PipeWire's JACK library): a JACK client
/// with one output port per channel, the engine rendered in JACK's process callback, at the
/// server's rate and period.
///
/// ```swift
/// let output = try JACKOutput(engine: engine, configuration: .init(clientName: "pianola"))
/// engine.outputDevice = output
/// try output.start()    // registers in the graph, connects to the system's playback ports
/// ```
///
/// The process callback follows the audio thread's rules (no allocation, no lock, no blocking).
/// A period longer than the engine was prepared for (the server's buffer size raised while
/// playing) is rendered in several pulls. When the server goes away, `failure` says so and
/// `isRunning` turns false; xruns the server reports are counted. In freewheel mode (a DAW
/// exporting) the callback simply runs faster: every frame is rendered as when playing.
public final class JACKOutput: AudioOutputDevice, AudioPresentationClock, @unchecked Sendable {
    /// How to register with the server.
    public struct Configuration: Sendable, Hashable {
        /// The client's name in the JACK graph (JACK adds a number if it is taken).
        public var clientName = "pianola"
        /// The server to connect to; nil for the default one (`$JACK_DEFAULT_SERVER`, else `default`).
        public var serverName: String?
        /// Output ports (`out_1` … `out_N`), 1…64.
        public var channelCount = 2
        /// Whether `start()` connects the ports to the server's physical playback ports, in order.
        public var connectsToPlayback = true
        /// Whether the client has a MIDI input port (`midi_in`), whose events go to
        /// `midiDestination` at their frames inside the period.
        public var hasMIDIInput = false
        /// What the client does with the server's transport (see `JACKOutput.Transport`).
        public var transport = Transport.ignored
        /// The output ports' short names, one per channel (`ch10_left`, say); nil for `out_1` … `out_N`.
        public var portNames: [String]?

        /// A configuration with the defaults: `pianola`, the default server, stereo, connected, no
        /// MIDI input, the transport ignored.
        public init(
            clientName: String = "pianola", serverName: String? = nil, channelCount: Int = 2,
            connectsToPlayback: Bool = true, hasMIDIInput: Bool = false, transport: Transport = .ignored
        ) {
            self.clientName = clientName
            self.serverName = serverName
            self.channelCount = channelCount
            self.connectsToPlayback = connectsToPlayback
            self.hasMIDIInput = hasMIDIInput
            self.transport = transport
        }
    }

    /// The engine rendered in each period.
    public let engine: AudioEngine
    /// The client's name as the server granted it (`pianola`, or `pianola-01` when taken).
    public let clientName: String
    /// The server's sample rate, at which the engine renders.
    public let sampleRate: Double
    /// Output ports, one per channel.
    public let channelCount: Int
    /// The ports' full names (`pianola:out_1` …, or the configured names), in channel order.
    public let portNames: [String]
    /// The MIDI input port's full name (`pianola:midi_in`), when configured.
    public let midiPortName: String?
    /// Where the MIDI input's events go (a sampler, or a router among samplers): each at its frame
    /// inside the period, in the quantum that renders it. Set it before `start()`: the process
    /// thread reads it, and the `running` flag's release publishes it.
    public var midiDestination: (any MIDIReceivingNode)?
    /// Called on the process thread with each MIDI event taken in: its bytes, its sample time on
    /// the engine's clock, and when it sounds (`presentationTime(ofSampleTime:)`, CLOCK_MONOTONIC
    /// nanoseconds), for a recorder to copy; it must not allocate, lock or block. Set it before
    /// `start()`.
    public var midiObserver: (@Sendable (UnsafeBufferPointer<UInt8>, Int64, UInt64) -> Void)?

    let api: UnsafePointer<pianola_jack_api>
    let client: OpaquePointer
    /// What the client does with the server's transport.
    public let transport: Transport
    /// Who follows the server's transport (`transport` not `.ignored`): told where the transport
    /// is at the start of each cycle, asked whether it is ready before the transport rolls from a
    /// new place, and (as timebase master) asked for the bar grid. Set it before `start()`.
    public var transportFollower: (any TransportFollowing)?
    private let ports: UnsafeMutablePointer<OpaquePointer?>
    /// The ports' buffers for the current period (written on the process thread only).
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let connectsToPlayback: Bool
    private let buffer: AudioBuffer
    private let running = Atomic<Bool>(false)
    private let active = Atomic<Bool>(false)
    private let xruns = Atomic<Int>(0)
    private let periodSize = Atomic<Int>(0)
    private let freewheeling = Atomic<Bool>(false)
    /// Why the server stopped the stream, set by its callbacks without allocating or locking:
    /// 0 running, 1 shut down (`stopReason` holds JACK's words), 2 sample rate changed (`newRate`).
    private let stopKind = Atomic<Int>(0)
    private let stopReason: UnsafeMutablePointer<CChar>
    private let newRate = Atomic<Int>(0)
    private let midiPort: OpaquePointer?
    private let midiEvents = Atomic<Int>(0)
    private let lastMIDI = Atomic<UInt64>(0)
    private let threadID = Atomic<Int32>(0)
    /// When the frames are heard: the line through the cycles' starts.
    package let clockLine: JACKClockLine
    private var isClosed = false

    /// Opens a client on the server and registers its ports; nothing plays until `start()`.
    /// Throws when there is no JACK library or no server (never starting one), or the server
    /// refuses.
    public init(engine: AudioEngine, configuration: Configuration = Configuration()) throws(JACKError) {
        guard (1...64).contains(configuration.channelCount) else {
            throw .portFailed("JACK output: channels must be 1…64, not \(configuration.channelCount)")
        }
        if let names = configuration.portNames {
            guard names.count == configuration.channelCount else {
                throw .portFailed(
                    "JACK output: \(names.count) port names for \(configuration.channelCount) channels")
            }
            guard names.allSatisfy({ !$0.isEmpty && !$0.contains(":") }), Set(names).count == names.count else {
                throw .portFailed("JACK output: port names must be distinct, not empty, without ':'")
            }
        }
        api = try JACKLibrary.load()
        var status = jack_status_t(rawValue: 0)
        guard
            let client = pianola_jack_client_open(
                configuration.clientName, JackNoStartServer, &status, configuration.serverName)
        else {
            throw JACKLibrary.openingError(status, client: configuration.clientName, server: configuration.serverName)
        }
        self.client = client
        self.engine = engine
        clientName = api.pointee.get_client_name(client).map { String(cString: $0) } ?? configuration.clientName
        sampleRate = Double(api.pointee.get_sample_rate(client))
        clockLine = JACKClockLine(sampleRate: sampleRate)
        channelCount = configuration.channelCount
        connectsToPlayback = configuration.connectsToPlayback
        transport = configuration.transport
        let period = Int(api.pointee.get_buffer_size(client))
        periodSize.store(period, ordering: .relaxed)
        // Prepared for the period, and at least 2048 frames: a larger period is rendered in pulls.
        buffer = AudioBuffer(channelCount: configuration.channelCount, frameCapacity: max(period, 2_048))
        // Allocated here, freed by `deinit` (or by `fail` when a port is refused).
        let stopReason = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
        stopReason.initialize(repeating: 0, count: 256)
        let ports = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: configuration.channelCount)
        ports.initialize(repeating: nil, count: configuration.channelCount)
        let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: configuration.channelCount)
        outputs.initialize(repeating: nil, count: configuration.channelCount)
        (self.stopReason, self.ports, self.outputs) = (stopReason, ports, outputs)
        let api = self.api
        let name = clientName
        func fail(_ port: String, _ error: JACKError? = nil) -> JACKError {
            _ = api.pointee.client_close(client)
            ports.deallocate()
            outputs.deallocate()
            stopReason.deallocate()
            return error ?? .portFailed("JACK refused the port \(name):\(port)")
        }
        var names: [String] = []
        for channel in 0..<configuration.channelCount {
            let short = configuration.portNames?[channel] ?? "out_\(channel + 1)"
            guard
                let port = api.pointee.port_register(
                    client, short, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
            else { throw fail(short) }
            ports[channel] = port
            names.append(api.pointee.port_name(port).map { String(cString: $0) } ?? "\(clientName):\(short)")
        }
        portNames = names
        if configuration.hasMIDIInput {
            guard
                let port = api.pointee.port_register(
                    client, "midi_in", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
            else { throw fail("midi_in") }
            midiPort = port
            midiPortName = api.pointee.port_name(port).map { String(cString: $0) } ?? "\(clientName):midi_in"
        } else {
            midiPort = nil
            midiPortName = nil
        }
        installCallbacks()
        guard installTransportCallbacks() else {
            throw fail(
                "", .cannotOpen(client: name, reason: "the server would not make it the transport's timebase master"))
        }
    }

    deinit {
        close()
        ports.deallocate()
        outputs.deallocate()
        stopReason.deallocate()
    }

    /// Output latency the server's period adds, in seconds (one period).
    public var bufferLatency: Double { Double(periodFrames) / sampleRate }
    /// The server's period in frames (it may change while playing).
    public var periodFrames: Int { periodSize.load(ordering: .relaxed) }
    /// JACK's process thread's kernel thread id (for profilers and the allocation tests), once it
    /// has run.
    public var audioThreadID: Int32? {
        let id = threadID.load(ordering: .relaxed)
        return id == 0 ? nil : id
    }
    /// MIDI events taken in by the MIDI input port so far.
    public var midiEventCount: Int { midiEvents.load(ordering: .relaxed) }
    /// When the last MIDI event taken in sounds (CLOCK_MONOTONIC nanoseconds), 0 before the first.
    public var lastMIDIArrival: UInt64 { lastMIDI.load(ordering: .relaxed) }
    /// The xruns the server reported while the client was active.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }
    /// Whether the server is in freewheel mode (running as fast as it can, not paced by a device).
    public var isFreewheeling: Bool { freewheeling.load(ordering: .relaxed) }
    /// Why the stream stopped on its own (the server went away, or changed its sample rate), if it did.
    public var failure: JACKError? {
        switch stopKind.load(ordering: .acquiring) {
        case 1: return .serverStopped(reason: String(cString: stopReason))
        case 2: return .sampleRateChanged(from: Int(sampleRate), to: newRate.load(ordering: .relaxed))
        default: return nil
        }
    }
    public var isRunning: Bool { running.load(ordering: .relaxed) }

    /// Prepares the engine at the server's rate and activates the client (the process callback
    /// starts), then connects the ports to the physical playback ports when configured to.
    public func start() throws {
        guard !running.load(ordering: .relaxed) else { return }
        guard !isClosed else { throw JACKError.portFailed("the JACK output is closed") }
        if let failure { throw failure }
        try engine.prepare(
            format: AudioFormat(sampleRate: sampleRate, channelCount: channelCount),
            maximumFrameCount: buffer.frameCapacity)
        running.store(true, ordering: .releasing)
        if !active.load(ordering: .relaxed) {
            guard api.pointee.activate(client) == 0 else {
                running.store(false, ordering: .relaxed)
                throw JACKError.cannotOpen(client: clientName, reason: "the server would not activate it")
            }
            active.store(true, ordering: .relaxed)
            if connectsToPlayback { connectToPlayback() }
        }
    }

    /// Stops rendering: the ports play silence from the next period (the client stays in the graph
    /// with its connections until `close()`).
    public func stop() {
        running.store(false, ordering: .releasing)
        // A period already in the engine finishes; then the callback only writes silence.
        if active.load(ordering: .relaxed) { usleep(UInt32(min(1, bufferLatency * 2) * 1_000_000)) }
    }

    /// Stops, deactivates and closes the client: its ports leave the graph. Closing twice is harmless.
    public func close() {
        guard !isClosed else { return }
        running.store(false, ordering: .releasing)
        isClosed = true
        if transport == .timebaseMaster { _ = api.pointee.release_timebase(client) }
        if active.load(ordering: .relaxed) { _ = api.pointee.deactivate(client) }
        active.store(false, ordering: .relaxed)
        _ = api.pointee.client_close(client)
    }

    /// Whether the client is still open (until `close()`).
    public var isOpen: Bool { !isClosed }

    /// When the frame rendered at `sampleTime` is heard (CLOCK_MONOTONIC, nanoseconds): a cycle
    /// renders what the server plays from the next one on, so a period after the cycle's start,
    /// plus the frame's place in it (the hardware's own buffer beyond that is the server's and not
    /// counted). Nil before the first cycle. Safe on the audio thread.
    public func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64? {
        clockLine.reading(ofSampleTime: sampleTime)?.time
    }

    /// The xruns so far: each one shifts frames against time.
    public var discontinuityCount: Int { xrunCount }
    /// One period, the part of the output's latency the client knows.
    public var bufferDuration: Double { bufferLatency }
    /// The periods of the output's buffer the client knows: one (the server's).
    public var periodCount: Int { 1 }

    /// The full names of the graph's ports of `type` with `flags`.
    func ports(type: String, flags: UInt) -> [String] {
        JACKLibrary.portNames(api, client, type: type, flags: flags)
    }

    /// `jack_connect`: 0, EEXIST when already connected, or another error.
    func connect(_ source: String, to destination: String) -> Int32 {
        api.pointee.connect(client, source, destination)
    }

    /// Connects channel k to the k-th physical playback port, as far as there are such ports.
    private func connectToPlayback() {
        let playback = ports(
            type: JACK_DEFAULT_AUDIO_TYPE, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue))
        for (name, destination) in zip(portNames, playback) { _ = connect(name, to: destination) }
    }

    /// The period: the engine rendered (in pulls of at most its prepared size) into the ports,
    /// or silence when not running. Runs on JACK's process thread.
    fileprivate func process(_ frames: Int) {
        if threadID.load(ordering: .relaxed) == 0 { threadID.store(pianola_jack_thread_id(), ordering: .relaxed) }
        let count = channelCount
        for channel in 0..<count {
            let raw = api.pointee.port_get_buffer(ports[channel], jack_nframes_t(frames))
            outputs[channel] = raw?.assumingMemoryBound(to: Float.self)
        }
        guard running.load(ordering: .acquiring) else {
            for channel in 0..<count { outputs[channel]?.update(repeating: 0, count: frames) }
            return
        }
        publishCycle()
        reportTransport()
        let midi = midiPort.flatMap { api.pointee.port_get_buffer($0, jack_nframes_t(frames)) }
        let eventCount = midi.map { Int(api.pointee.midi_get_event_count($0)) } ?? 0
        var nextEvent = 0
        var done = 0
        while done < frames {
            let pull = min(frames - done, buffer.frameCapacity)
            // This pull's MIDI first, each event at its frame (JACK gives them in time order).
            if let midi {
                let start = engine.currentSampleTime
                var event = jack_midi_event_t()
                while nextEvent < eventCount, api.pointee.midi_event_get(&event, midi, UInt32(nextEvent)) == 0,
                    Int(event.time) < done + pull
                {
                    deliver(event, atFrameOffset: max(0, Int(event.time) - done), sampleTime: start)
                    nextEvent += 1
                }
            }
            engine.render(frameCount: pull, into: buffer)
            for channel in 0..<count {
                (outputs[channel]! + done).update(from: buffer.channel(channel), count: pull)
            }
            done += pull
        }
    }

    /// One JACK MIDI event to the destination: a channel or system message by its bytes, SysEx
    /// by its payload (in JACK's memory, copied by the node). Process thread.
    private func deliver(_ event: jack_midi_event_t, atFrameOffset offset: Int, sampleTime: Int64) {
        guard let bytes = event.buffer, event.size > 0 else { return }
        midiEvents.add(1, ordering: .relaxed)
        let data = UnsafeBufferPointer(start: bytes, count: event.size)
        let time = sampleTime + Int64(offset)
        let sounding = presentationTime(ofSampleTime: time) ?? 0
        lastMIDI.store(sounding, ordering: .relaxed)
        midiObserver?(data, time, sounding)
        guard let destination = midiDestination else { return }
        if data[0] == 0xF0 {
            let end = data.last == 0xF7 ? data.count - 1 : data.count
            destination.receiveSystemExclusive(UnsafeBufferPointer(rebasing: data[1..<end]), atFrameOffset: offset)
        } else if let message = MIDIMessage(
            status: data[0], data1: data.count > 1 ? data[1] : 0, data2: data.count > 2 ? data[2] : 0)
        {
            destination.receive(message, atFrameOffset: offset)
        }
    }

    /// Notes when this cycle started and at which sample time (process thread).
    private func publishCycle() {
        clockLine.publishCycle(sample: engine.currentSampleTime, xruns: xrunCount, periodFrames: periodFrames)
    }

    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = api.pointee.set_process_callback(
            client,
            { frames, argument in
                Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue().process(Int(frames))
                return 0
            }, context)
        // JACK asks these to be async-signal-safe: no allocation, no lock.
        api.pointee.on_info_shutdown(
            client,
            { _, reason, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                if let reason { strncpy(output.stopReason, reason, 255) }
                output.stopKind.store(1, ordering: .releasing)
                output.running.store(false, ordering: .releasing)
            }, context)
        _ = api.pointee.set_sample_rate_callback(
            client,
            { rate, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                guard Double(rate) != output.sampleRate else { return 0 }
                output.newRate.store(Int(rate), ordering: .relaxed)
                output.stopKind.store(2, ordering: .releasing)
                output.running.store(false, ordering: .releasing)
                return 0
            }, context)
        _ = api.pointee.set_xrun_callback(
            client,
            { argument in
                Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue().xruns.add(1, ordering: .relaxed)
                return 0
            }, context)
        _ = api.pointee.set_buffer_size_callback(
            client,
            { frames, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                output.periodSize.store(Int(frames), ordering: .relaxed)
                return 0
            }, context)
        _ = api.pointee.set_freewheel_callback(
            client,
            { starting, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                output.freewheeling.store(starting != 0, ordering: .relaxed)
            }, context)
    }
}
