import Synchronization

/// A graph of audio nodes rendered by pulling from its output, one quantum at a time, in the
/// spirit of AVAudioEngine.
///
/// Build the graph on a control thread (`attach`, `connect`, `disconnect`), prepare it
/// (`enableManualRenderingMode` for offline work, or let a device output prepare it), then render.
/// `render(frameCount:into:)` is the one render path: the offline renderer and the ALSA output
/// both call it, so a file rendered offline holds exactly the samples a device would have played.
///
/// Graph changes made while rendering are compiled into a new plan on the calling thread and
/// picked up by the render thread between quanta; mixer inputs whose source changes fade out
/// over one quantum first, and new ones fade in, so changes do not click. A change that
/// prepares a node again (a new channel count, a move upstream of a varispeed) takes the node
/// out for a period or two while it is prepared, the rest playing on. The render path takes
/// no lock and allocates nothing.
public final class AudioEngine: @unchecked Sendable {
    /// The node whose input is the engine's output.
    public let outputNode = OutputNode()

    struct Connection: Hashable {
        let source: ObjectIdentifier
        let format: AudioFormat?
        /// The output channels of a route into the output node (nil: the default map).
        var channels: [Int]? = nil
    }

    struct GraphState {
        var nodes: [ObjectIdentifier: AudioNode] = [:]
        /// The nodes in the order they were attached.
        var attachOrder: [ObjectIdentifier] = []
        /// destination node → bus → source
        var inputs: [ObjectIdentifier: [Int: Connection]] = [:]
        var taps: [ObjectIdentifier: [AudioTap]] = [:]
        var observers: [RenderObserver] = []
        var format: AudioFormat?
        var maximumFrameCount = 0
        /// The most frames each node was prepared to render.
        var preparedFrameCounts: [ObjectIdentifier: Int] = [:]
        var buffers: [ObjectIdentifier: AudioBuffer] = [:]
        var plans: [RenderPlan] = []
        var generation = 0
        var mainMixer: MixerNode?
        var scratch: AudioBuffer?
    }

    let state = Mutex(GraphState())
    private let device = Mutex<(any AudioOutputDevice)?>(nil)
    /// The newest plan (an unretained pointer; `GraphState.plans` keeps it alive).
    let publishedPlan = Atomic<Int>(0)
    /// The generation the render thread is using; older plans may be freed.
    let renderedGeneration = Atomic<Int>(0)
    // Render-thread state.
    private var currentPlan: Unmanaged<RenderPlan>?
    private var fadeTarget = 0
    /// The frames rendered: written by the render thread, read by others too (a sending thread
    /// maps MIDI to device time by it), so an atomic: every reader sees a whole value.
    private let renderedFrames = Atomic<Int64>(0)
    private var sampleTime: Int64 {
        get { renderedFrames.load(ordering: .relaxed) }
        set { renderedFrames.store(newValue, ordering: .relaxed) }
    }
    /// `sampleTime` at the end of the last quantum whose output reached `silenceThreshold`
    /// (written by the render thread, read by others).
    private let lastSoundingTime = Atomic<Int64>(0)

    /// An empty engine: only `outputNode` is attached, and the main mixer is made on first use of
    /// `mainMixerNode`. Nothing renders until the engine is prepared
    /// (`enableManualRenderingMode(format:maximumFrameCount:)`, or a device output) and something is
    /// connected to the output.
    public init() {
        state.withLock {
            $0.nodes[ObjectIdentifier(outputNode)] = outputNode
            $0.attachOrder.append(ObjectIdentifier(outputNode))
        }
        outputNode.engine = self
    }

    // MARK: Graph

    /// The engine's main mixer, created on first use and connected to the output (its bus 0, when
    /// nothing is connected there yet).
    public var mainMixerNode: MixerNode {
        if let mixer = state.withLock({ $0.mainMixer }) { return mixer }
        let mixer = MixerNode(name: "main mixer")
        insert(mixer)
        // To the output's bus 0, unless something is there already (a node connected to the output
        // before the mixer was first asked for keeps its place).
        let outputID = ObjectIdentifier(outputNode)
        if state.withLock({ $0.inputs[outputID]?[0] == nil }) {
            try? connect(mixer, to: outputNode)  // cannot fail: both attached, no cycle possible
        }
        state.withLock { $0.mainMixer = mixer }
        return mixer
    }

    /// Adds a node to the engine (it renders once something connects it to the output). A node
    /// belongs to one engine at a time: one that another engine holds is refused.
    public func attach(_ node: AudioNode) throws(AudioGraphError) {
        if let owner = node.engine, owner !== self { throw .nodeAttachedElsewhere(node.name) }
        insert(node)
    }

    private func insert(_ node: AudioNode) {
        state.withLock {
            let key = ObjectIdentifier(node)
            if $0.nodes.updateValue(node, forKey: key) == nil { $0.attachOrder.append(key) }
        }
        node.engine = self
    }

    /// The attached nodes, in the order they were attached (the output node and the main mixer
    /// among them).
    public var attachedNodes: [AudioNode] {
        state.withLock { state in state.attachOrder.compactMap { state.nodes[$0] } }
    }

    /// Removes a node and all its connections.
    public func detach(_ node: AudioNode) throws {
        try mutate { graph in
            let id = ObjectIdentifier(node)
            guard graph.nodes[id] != nil else { throw AudioGraphError.nodeNotAttached(node.name) }
            graph.inputs[id] = nil
            for (destination, buses) in graph.inputs {
                graph.inputs[destination] = buses.filter { $0.value.source != id }
            }
            graph.nodes[id] = nil
            graph.attachOrder.removeAll { $0 == id }
            graph.taps[id] = nil
            graph.preparedFrameCounts[id] = nil
            graph.buffers[id] = nil
        }
        node.engine = nil
    }

    /// Connects `source`'s output to input `toBus` of `destination` (the next free bus of a mixer
    /// when nil). `format`, when given, must match the engine's sample rate and the source's
    /// channel count.
    public func connect(
        _ source: AudioNode, to destination: AudioNode, toBus: Int? = nil, format: AudioFormat? = nil
    ) throws {
        try mutate { graph in
            let sourceID = ObjectIdentifier(source)
            let destinationID = ObjectIdentifier(destination)
            guard graph.nodes[sourceID] != nil else { throw AudioGraphError.nodeNotAttached(source.name) }
            guard graph.nodes[destinationID] != nil else { throw AudioGraphError.nodeNotAttached(destination.name) }
            let buses = graph.inputs[destinationID] ?? [:]
            // Without a bus: a mixer's next free one; the output's bus 0, replacing what it had (as
            // AVAudioEngine does: other routes into the output are made with `channels:`).
            let bus =
                toBus ?? (destination is OutputNode ? 0 : nil)
                ?? (0..<destination.inputBusCount).first { buses[$0] == nil } ?? destination.inputBusCount
            guard bus >= 0 && bus < destination.inputBusCount else {
                throw AudioGraphError.invalidBus(node: destination.name, bus: bus)
            }
            if let format {
                if let engineFormat = graph.format, format.sampleRate != engineFormat.sampleRate {
                    throw AudioGraphError.formatMismatch(
                        node: destination.name, format: format,
                        reason: "the engine runs at \(engineFormat.sampleRate) Hz")
                }
                guard destination.accepts(format, onBus: bus) else {
                    throw AudioGraphError.formatMismatch(
                        node: destination.name, format: format, reason: "unsupported channel count on bus \(bus)")
                }
            }
            if sourceID == destinationID || Self.isUpstream(destinationID, of: sourceID, in: graph) {
                throw AudioGraphError.cycle("\(source.name) → \(destination.name) → … → \(source.name)")
            }
            graph.inputs[destinationID, default: [:]][bus] = Connection(source: sourceID, format: format)
        }
    }

    /// Disconnects input `bus` of `node` (all its inputs when nil).
    public func disconnectInput(of node: AudioNode, bus: Int? = nil) throws {
        try mutate { graph in
            let id = ObjectIdentifier(node)
            guard graph.nodes[id] != nil else { throw AudioGraphError.nodeNotAttached(node.name) }
            if let bus { graph.inputs[id]?[bus] = nil } else { graph.inputs[id] = nil }
        }
    }

    /// Disconnects `node`'s output from everything it feeds.
    public func disconnectOutput(of node: AudioNode) throws {
        try mutate { graph in
            let id = ObjectIdentifier(node)
            guard graph.nodes[id] != nil else { throw AudioGraphError.nodeNotAttached(node.name) }
            for (destination, buses) in graph.inputs {
                graph.inputs[destination] = buses.filter { $0.value.source != id }
            }
        }
    }

    /// The input bus of `destination` that `source` feeds, if any.
    public func inputBus(of destination: AudioNode, connectedFrom source: AudioNode) -> Int? {
        state.withLock { graph in
            graph.inputs[ObjectIdentifier(destination)]?.first { $0.value.source == ObjectIdentifier(source) }?.key
        }
    }

    /// Watches `node`'s output on the render thread. A tapped node renders (with the nodes that feed
    /// it) even when nothing connects it to the output.
    public func installTap(on node: AudioNode, _ tap: AudioTap) throws {
        try mutate { graph in
            guard graph.nodes[ObjectIdentifier(node)] != nil else { throw AudioGraphError.nodeNotAttached(node.name) }
            graph.taps[ObjectIdentifier(node), default: []].append(tap)
        }
    }

    /// Removes every tap installed on `node`; nothing happens if it has none or is not attached. A quantum
    /// already rendering may still call them. Throws only if recompiling the prepared graph fails (the graph
    /// is then left as it was).
    public func removeTaps(on node: AudioNode) throws {
        try mutate { graph in graph.taps[ObjectIdentifier(node)] = nil }
    }

    /// Calls `observer` at the start of every quantum, before any node renders.
    public func addRenderObserver(_ observer: RenderObserver) throws {
        try mutate { graph in graph.observers.append(observer) }
    }

    /// Stops calling `observer` (matched by identity; nothing happens if it is not registered). A quantum
    /// already rendering may still call it. Throws only if recompiling the prepared graph fails (the graph is
    /// then left as it was).
    public func removeRenderObserver(_ observer: RenderObserver) throws {
        try mutate { graph in graph.observers.removeAll { $0 === observer } }
    }

    // MARK: Preparing and rendering

    /// The format the engine renders in, once prepared.
    public var format: AudioFormat? { state.withLock { $0.format } }
    /// The most frames one `render` call may ask for.
    public var maximumFrameCount: Int { state.withLock { $0.maximumFrameCount } }

    /// Prepares the graph to render `format` (stereo at the sample rate) in calls of at most
    /// `maximumFrameCount` frames, driven by the caller (offline rendering, tests).
    public func enableManualRenderingMode(format: AudioFormat, maximumFrameCount: Int) throws {
        try prepare(format: format, maximumFrameCount: maximumFrameCount)
    }

    /// Prepares every node for `format` and compiles the graph. Device outputs call this too.
    public func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        guard maximumFrameCount > 0 else { throw AudioGraphError.frameCountTooLarge(requested: 0, maximum: 0) }
        try mutate { graph in
            if graph.format != format || graph.maximumFrameCount != maximumFrameCount {
                graph.preparedFrameCounts.removeAll()
                graph.buffers.removeAll()
            }
            graph.format = format
            graph.maximumFrameCount = maximumFrameCount
            if graph.scratch?.frameCapacity != maximumFrameCount || graph.scratch?.channelCount != format.channelCount {
                graph.scratch = AudioBuffer(channelCount: format.channelCount, frameCapacity: maximumFrameCount)
            }
        }
    }

    // MARK: Playing through a device

    /// The device `start()` plays through (AudioIO's `connectOutput(toDevice:)` opens an ALSA
    /// device and sets it). The engine and its device keep each other alive; set this to nil,
    /// after `stop()`, to let them go.
    public var outputDevice: (any AudioOutputDevice)? {
        get { device.withLock { $0 } }
        set { device.withLock { $0 = newValue } }
    }

    /// Starts rendering in real time through `outputDevice`: the device's audio thread pulls
    /// `render(frameCount:into:)` one period at a time. Nodes, connections and render observers
    /// (a `MusicPlayer`) may change while it runs.
    public func start() throws {
        guard let device = outputDevice else { throw AudioGraphError.noOutputDevice }
        try device.start()
    }

    /// Stops the device's audio thread and lets the device play out what it holds.
    public func stop() { outputDevice?.stop() }

    /// Whether the output device is pulling the engine.
    public var isRunning: Bool { outputDevice?.isRunning ?? false }

    /// Frames rendered since the engine was prepared (render thread's clock; any thread may read it).
    public var currentSampleTime: Int64 { sampleTime }

    /// The level under which the engine's output counts as silent: −90 dBFS (3.16e-5), the level
    /// at which `OfflineRenderer`'s automatic tail ends.
    public static let silenceThreshold: Float = 3.162_277_7e-5

    /// How many frames the engine has rendered since its output last reached `silenceThreshold`
    /// (any sample of any channel of the buffer rendered into): 0 when the last quantum sounded.
    /// `AudioSequencer.isFinished(includingTail:)` reads it to tell when a song's tail has died
    /// away. Any thread may read it; `reset()` starts it again from 0.
    public var silentFrameCount: Int64 {
        max(0, sampleTime - lastSoundingTime.load(ordering: .relaxed))
    }

    /// Renders `frameCount` frames (at most `maximumFrameCount`) into `buffer`: runs the render
    /// observers, then every node in dependency order. Render thread; no locks, no allocation.
    /// Returns false, leaving the buffer silent, if the engine is not prepared or the output is
    /// not connected (tapped nodes render all the same).
    ///
    /// A buffer with the engine's channel count gets each of its channels. A buffer of one
    /// channel, for an engine of more, gets their mix-down: their mean, (L + R) / 2 from
    /// stereo, as a mono output folds a stereo source down (a hard-panned source comes out at
    /// half its level, −6 dB). Channels beyond the engine's are silent.
    /// `renderOffline(frameCount:into:)` refuses a buffer of other counts; this one fills its
    /// channels with the engine's first ones.
    @discardableResult
    public func render(frameCount: Int, into buffer: AudioBuffer) -> Bool {
        let frames = min(frameCount, buffer.frameCapacity)
        adoptPublishedPlan()
        guard let plan = currentPlan?.takeUnretainedValue(), plan.routing.isConnected || !plan.steps.isEmpty,
            frames <= plan.maximumFrameCount
        else {
            buffer.clear(frames: frames)
            buffer.frameLength = frames
            return false
        }
        let time = AudioTime(sampleTime: sampleTime, sampleRate: plan.sampleRate)
        // Index loops: iterators over arrays of existentials allocate in unoptimized builds.
        for index in 0..<plan.observers.count { plan.observers[index].willRender(frameCount: frames, at: time) }
        let domainFrames = plan.domainFrames(engineFrames: frames, engineTime: sampleTime)
        for index in 0..<plan.steps.count {
            let step = plan.steps[index]
            let count = domainFrames[step.domain]
            let stepTime =
                step.domain == 0
                ? time
                : AudioTime(sampleTime: plan.domains[step.domain].node!.inputSampleTime, sampleRate: plan.sampleRate)
            // (A domain's clock starts at its parent's time when its node first renders: see
            // `RenderPlan.domainFrames`.)
            step.output.frameLength = count
            step.node.engineFrameCount = frames
            step.node.render(
                into: step.output, inputs: RenderInputs(buffers: UnsafeBufferPointer(step.inputs)), frameCount: count,
                time: stepTime)
            for tapIndex in 0..<step.taps.count {
                step.taps[tapIndex].process(step.output, frameCount: count, time: stepTime)
            }
        }
        for domain in 1..<max(1, plan.domains.count) {
            plan.domains[domain].node!.inputSampleTime += Int64(domainFrames[domain])
        }
        buffer.frameLength = frames
        plan.routing.fill(buffer, frames: frames)
        sampleTime += Int64(frames)
        if Self.reaches(Self.silenceThreshold, buffer, frames: frames) {
            lastSoundingTime.store(sampleTime, ordering: .relaxed)
        }
        return plan.routing.isConnected
    }

    /// Whether any of the first `frames` samples of any channel of `buffer` is at `level` or
    /// above (in magnitude). Render thread; no allocation.
    private static func reaches(_ level: Float, _ buffer: AudioBuffer, frames: Int) -> Bool {
        for channel in 0..<buffer.channelCount {
            let samples = buffer.channel(channel)
            var peak: Float = 0
            for frame in 0..<frames { peak = max(peak, abs(samples[frame])) }
            if peak >= level { return true }
        }
        return false
    }

    /// Moves the render thread to the newest plan. When the new plan drops or re-sources mixer
    /// inputs, the current plan renders one more quantum with those inputs fading to silence.
    private func adoptPublishedPlan() {
        let published = publishedPlan.load(ordering: .acquiring)
        guard published != 0 else { return }
        let next = Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: published)!)
        guard let current = currentPlan else {
            adopt(next)
            return
        }
        if Int(bitPattern: current.toOpaque()) == published { return }
        let currentValue = current.takeUnretainedValue()
        if fadeTarget == published {
            // The fade-out quantum has been rendered.
            currentValue.clearFadeOuts()
            adopt(next)
        } else {
            currentValue.clearFadeOuts()
            if currentValue.markFadeOuts(before: next.takeUnretainedValue()) {
                fadeTarget = published
            } else {
                adopt(next)
            }
        }
    }

    private func adopt(_ plan: Unmanaged<RenderPlan>) {
        currentPlan = plan
        fadeTarget = 0
        renderedGeneration.store(plan.takeUnretainedValue().generation, ordering: .releasing)
    }

    /// Renders `frameCount` frames in quanta of at most `maximumFrameCount` into `buffer`
    /// (offline: the caller's thread drives the engine).
    ///
    /// `buffer` has the engine's channel count (more channels are left silent), or one channel:
    /// it then gets the engine's channels mixed down to their mean, (L + R) / 2 from stereo, as
    /// `render(frameCount:into:)` describes. A buffer with more than one channel but fewer than
    /// the engine's is refused (`AudioGraphError.formatMismatch`): there is no one way to fold
    /// the engine's channels into it.
    public func renderOffline(frameCount: Int, into buffer: AudioBuffer) throws {
        let maximum = maximumFrameCount
        guard maximum > 0, let format else { throw AudioGraphError.notPrepared }
        guard frameCount <= buffer.frameCapacity else {
            throw AudioGraphError.bufferTooSmall(requested: frameCount, capacity: buffer.frameCapacity)
        }
        guard buffer.channelCount == 1 || buffer.channelCount >= format.channelCount else {
            throw AudioGraphError.formatMismatch(
                node: "the buffer rendered into", format: format,
                reason: "it has \(buffer.channelCount) channels: give it \(format.channelCount), "
                    + "or 1 for the channels' mix-down")
        }
        guard currentPlanOutputConnected() else { throw AudioGraphError.outputNotConnected }
        if frameCount <= maximum {
            render(frameCount: frameCount, into: buffer)
            return
        }
        guard let scratch = state.withLock({ $0.scratch }) else { throw AudioGraphError.notPrepared }
        var done = 0
        while done < frameCount {
            let count = min(maximum, frameCount - done)
            render(frameCount: count, into: scratch)
            if buffer.channelCount == 1 && scratch.channelCount > 1 {
                // The mean of the engine's channels, summed in the order `render` sums them.
                let target = buffer.channel(0) + done
                let share = 1 / Float(scratch.channelCount)
                for frame in 0..<count { target[frame] = share * scratch.channel(0)[frame] }
                for channel in 1..<scratch.channelCount {
                    let source = scratch.channel(channel)
                    for frame in 0..<count { target[frame] += share * source[frame] }
                }
                done += count
                continue
            }
            for channel in 0..<buffer.channelCount {
                // Channels beyond the engine's format are silent, as `render` leaves them.
                if channel < scratch.channelCount {
                    (buffer.channel(channel) + done).update(from: scratch.channel(channel), count: count)
                } else {
                    (buffer.channel(channel) + done).update(repeating: 0, count: count)
                }
            }
            done += count
        }
        buffer.frameLength = frameCount
    }

    private func currentPlanOutputConnected() -> Bool {
        let published = publishedPlan.load(ordering: .acquiring)
        guard published != 0 else { return false }
        return Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: published)!).takeUnretainedValue()
            .routing.isConnected
    }

    /// Resets the sample clock and every node's state (control thread, not while rendering).
    public func reset() {
        sampleTime = 0
        lastSoundingTime.store(0, ordering: .relaxed)
        let nodes = state.withLock { Array($0.nodes.values) }
        for node in nodes {
            (node as? RateConvertingNode)?.isClockStarted = false
            node.reset()
        }
    }
}
