import AudioGraph
import CJACK
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
public final class JACKOutput: AudioOutputDevice, @unchecked Sendable {
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

        /// A configuration with the defaults: `pianola`, the default server, stereo, connected.
        public init(
            clientName: String = "pianola", serverName: String? = nil, channelCount: Int = 2,
            connectsToPlayback: Bool = true
        ) {
            self.clientName = clientName
            self.serverName = serverName
            self.channelCount = channelCount
            self.connectsToPlayback = connectsToPlayback
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
    /// The ports' full names (`pianola:out_1` …), in channel order.
    public let portNames: [String]

    private let api: UnsafePointer<pianola_jack_api>
    private let client: OpaquePointer
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
    private let stopped = Mutex<JACKError?>(nil)
    private var isClosed = false

    /// Opens a client on the server and registers its ports; nothing plays until `start()`.
    /// Throws when there is no JACK library or no server (never starting one), or the server
    /// refuses.
    public init(engine: AudioEngine, configuration: Configuration = Configuration()) throws(JACKError) {
        guard (1...64).contains(configuration.channelCount) else {
            throw .portFailed("JACK output: channels must be 1…64, not \(configuration.channelCount)")
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
        channelCount = configuration.channelCount
        connectsToPlayback = configuration.connectsToPlayback
        let period = Int(api.pointee.get_buffer_size(client))
        periodSize.store(period, ordering: .relaxed)
        // Prepared for the period, and at least 2048 frames: a larger period is rendered in pulls.
        buffer = AudioBuffer(channelCount: configuration.channelCount, frameCapacity: max(period, 2_048))
        ports = .allocate(capacity: configuration.channelCount)
        ports.initialize(repeating: nil, count: configuration.channelCount)
        outputs = .allocate(capacity: configuration.channelCount)
        outputs.initialize(repeating: nil, count: configuration.channelCount)
        var names: [String] = []
        for channel in 0..<configuration.channelCount {
            let short = "out_\(channel + 1)"
            guard
                let port = api.pointee.port_register(
                    client, short, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
            else {
                _ = api.pointee.client_close(client)
                ports.deallocate()
                outputs.deallocate()
                throw .portFailed("JACK refused the port \(clientName):\(short)")
            }
            ports[channel] = port
            names.append(api.pointee.port_name(port).map { String(cString: $0) } ?? "\(clientName):\(short)")
        }
        portNames = names
        installCallbacks()
    }

    deinit {
        close()
        ports.deallocate()
        outputs.deallocate()
    }

    /// Output latency the server's period adds, in seconds (one period).
    public var bufferLatency: Double { Double(periodFrames) / sampleRate }
    /// The server's period in frames (it may change while playing).
    public var periodFrames: Int { periodSize.load(ordering: .relaxed) }
    /// The xruns the server reported while the client was active.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }
    /// Whether the server is in freewheel mode (running as fast as it can, not paced by a device).
    public var isFreewheeling: Bool { freewheeling.load(ordering: .relaxed) }
    /// Why the stream stopped on its own (the server went away), if it did.
    public var failure: JACKError? { stopped.withLock { $0 } }
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
        if active.load(ordering: .relaxed) { _ = api.pointee.deactivate(client) }
        active.store(false, ordering: .relaxed)
        _ = api.pointee.client_close(client)
    }

    /// Whether the client is still open (until `close()`).
    public var isOpen: Bool { !isClosed }

    /// Connects channel k to the k-th physical playback port, as far as there are such ports.
    private func connectToPlayback() {
        guard
            let list = api.pointee.get_ports(
                client, nil, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue))
        else { return }
        defer { api.pointee.free(UnsafeMutableRawPointer(mutating: list)) }
        var index = 0
        while index < channelCount, let destination = list[index] {
            _ = api.pointee.connect(client, portNames[index], destination)
            index += 1
        }
    }

    /// The period: the engine rendered (in pulls of at most its prepared size) into the ports,
    /// or silence when not running. Runs on JACK's process thread.
    fileprivate func process(_ frames: Int) {
        let count = channelCount
        for channel in 0..<count {
            let raw = api.pointee.port_get_buffer(ports[channel], jack_nframes_t(frames))
            outputs[channel] = raw?.assumingMemoryBound(to: Float.self)
        }
        guard running.load(ordering: .acquiring) else {
            for channel in 0..<count { outputs[channel]?.update(repeating: 0, count: frames) }
            return
        }
        var done = 0
        while done < frames {
            let pull = min(frames - done, buffer.frameCapacity)
            engine.render(frameCount: pull, into: buffer)
            for channel in 0..<count {
                (outputs[channel]! + done).update(from: buffer.channel(channel), count: pull)
            }
            done += pull
        }
    }

    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = api.pointee.set_process_callback(
            client,
            { frames, argument in
                Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue().process(Int(frames))
                return 0
            }, context)
        api.pointee.on_info_shutdown(
            client,
            { _, reason, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                let text = reason.map { String(cString: $0) } ?? ""
                output.stopped.withLock { $0 = .serverStopped(reason: text) }
                output.running.store(false, ordering: .releasing)
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
