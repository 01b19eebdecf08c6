import CJACK
import Synchronization

/// A JACK client of the test's own, in this process: it drives the server's transport (start,
/// stop, locate, as a DAW's buttons do) and records two ports together with the transport's
/// state and frame at each cycle, so that a recording can be laid against the song's timeline
/// frame by frame. Its process callback only copies into memory allocated up front.
public final class TransportProbe: @unchecked Sendable {
    /// One server cycle as the probe saw it.
    public struct Cycle {
        public var state: jack_transport_state_t
        public var frame: Int
        /// Where the cycle's audio starts in `left`/`right`.
        public var index: Int
        public var count: Int
        public var bbt: (bar: Int32, beat: Int32, tick: Int32, bpm: Double)?
        /// Whether the transport rolled in this cycle.
        public var isRolling: Bool { state == JackTransportRolling }
    }

    private let api: UnsafePointer<pianola_jack_api>
    private let client: OpaquePointer
    private let inputs: UnsafeMutablePointer<OpaquePointer?>
    private let capacity: Int
    private let audio: UnsafeMutablePointer<Float>
    private let cycles: UnsafeMutablePointer<Cycle>
    private let maximumCycles = 20_000
    private let written = Atomic<Int>(0)
    private let cycleCount = Atomic<Int>(0)

    /// A client `probe` on `server` recording up to `seconds` at 48 kHz.
    public init(server: String, seconds: Double = 30) throws {
        guard let api = pianola_jack_load(nil, 0) else { throw ProbeError.noLibrary }
        var status = jack_status_t(rawValue: 0)
        guard let client = pianola_jack_client_open("probe", JackNoStartServer, &status, server) else {
            throw ProbeError.noServer
        }
        self.api = api
        self.client = client
        capacity = Int(seconds * 48_000)
        audio = .allocate(capacity: 2 * capacity)
        audio.initialize(repeating: 0, count: 2 * capacity)
        cycles = .allocate(capacity: maximumCycles)
        inputs = .allocate(capacity: 2)
        for channel in 0..<2 {
            inputs[channel] = api.pointee.port_register(
                client, "in_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0)
        }
        _ = api.pointee.set_process_callback(
            client,
            { frames, argument in
                Unmanaged<TransportProbe>.fromOpaque(argument!).takeUnretainedValue().process(Int(frames))
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        guard api.pointee.activate(client) == 0 else { throw ProbeError.noServer }
    }

    deinit {
        _ = api.pointee.deactivate(client)
        _ = api.pointee.client_close(client)
        audio.deallocate()
        cycles.deallocate()
        inputs.deallocate()
    }

    public enum ProbeError: Error { case noLibrary, noServer }

    /// Connects `ports` (a client's outputs) to the probe's inputs, in order.
    public func connect(_ ports: [String]) -> Bool {
        let inputs: [String] = ["probe:in_1", "probe:in_2"]
        return zip(ports, inputs).allSatisfy { source, destination in
            api.pointee.connect(client, source, destination) == 0
        }
    }

    public func start() { api.pointee.transport_start(client) }
    public func stop() { api.pointee.transport_stop(client) }
    public func locate(frame: Int) { _ = api.pointee.transport_locate(client, jack_nframes_t(frame)) }

    /// The cycles recorded so far, and the audio (left and right), copied.
    public func recording() -> (cycles: [Cycle], left: [Float], right: [Float]) {
        let count = cycleCount.load(ordering: .acquiring)
        let frames = written.load(ordering: .acquiring)
        let list = (0..<count).map { cycles[$0] }
        let left = (0..<frames).map { audio[2 * $0] }
        let right = (0..<frames).map { audio[2 * $0 + 1] }
        return (list, left, right)
    }

    private func process(_ frames: Int) {
        let start = written.load(ordering: .relaxed)
        let index = cycleCount.load(ordering: .relaxed)
        guard start + frames <= capacity, index < maximumCycles else { return }
        var position = jack_position_t()
        let state = api.pointee.transport_query(client, &position)
        let hasBBT = position.valid.rawValue & JackPositionBBT.rawValue != 0
        cycles[index] = Cycle(
            state: state, frame: Int(position.frame), index: start, count: frames,
            bbt: hasBBT ? (position.bar, position.beat, position.tick, position.beats_per_minute) : nil)
        for channel in 0..<2 {
            guard let raw = api.pointee.port_get_buffer(inputs[channel], jack_nframes_t(frames)) else { continue }
            let samples = raw.assumingMemoryBound(to: Float.self)
            for frame in 0..<frames { audio[2 * (start + frame) + channel] = samples[frame] }
        }
        written.store(start + frames, ordering: .releasing)
        cycleCount.store(index + 1, ordering: .releasing)
    }
}
