/// An immutable snapshot of the graph, compiled on the control thread and handed to the render
/// thread through an atomic pointer: the nodes in dependency order, each with its output buffer
/// and its input buffers by bus. Plans are freed on the control thread, never while rendering.
final class RenderPlan {
    struct Step {
        unowned(unsafe) let node: AudioNode
        let output: AudioBuffer
        let inputs: UnsafeMutableBufferPointer<Unmanaged<AudioBuffer>?>
        let taps: [AudioTap]
        /// The rate domain the node renders in (0: the engine's pace).
        let domain: Int
    }

    /// Nodes upstream of a rate-converting node render for it, at its pace (domain 0: the
    /// engine's). Listed downstream first: a domain's parent comes before it.
    struct Domain {
        /// The rate-converting node the domain's nodes feed (nil for domain 0).
        unowned(unsafe) let node: RateConvertingNode?
        /// The domain the node itself renders in.
        let parent: Int
        /// The most frames the domain's nodes render in one quantum.
        let maximumFrameCount: Int
    }

    let generation: Int
    let sampleRate: Double
    let maximumFrameCount: Int
    let steps: [Step]
    let domains: [Domain]
    /// Each domain's frame count for the quantum being rendered (render thread).
    private let frameCounts: UnsafeMutableBufferPointer<Int>
    /// How the engine's output is made of the buffers routed into the output node.
    let routing: OutputRouting
    let observers: [RenderObserver]
    /// For each connected mixer input: the source node feeding it. A transition fades out every
    /// input whose source changes.
    let mixerSources: [ObjectIdentifier: ObjectIdentifier]
    let mixerInputs: [(MixerNode.Input, ObjectIdentifier)]

    init(
        generation: Int, sampleRate: Double, maximumFrameCount: Int, steps: [Step], domains: [Domain],
        routing: OutputRouting,
        observers: [RenderObserver], mixerInputs: [(MixerNode.Input, ObjectIdentifier)]
    ) {
        self.generation = generation
        self.sampleRate = sampleRate
        self.maximumFrameCount = maximumFrameCount
        self.steps = steps
        self.domains = domains
        frameCounts = .allocate(capacity: max(1, domains.count))
        frameCounts.initialize(repeating: 0)
        self.routing = routing
        self.observers = observers
        self.mixerInputs = mixerInputs
        var sources: [ObjectIdentifier: ObjectIdentifier] = [:]
        for (input, source) in mixerInputs { sources[ObjectIdentifier(input)] = source }
        self.mixerSources = sources
    }

    deinit {
        for step in steps { step.inputs.deallocate() }
        frameCounts.deallocate()
    }

    /// The frames each domain renders this quantum, the engine's being `engineFrames`: each
    /// rate-converting node asked, downstream first (render thread; allocates nothing).
    /// A node that renders for the first time (since the engine was reset) starts its domain's
    /// clock at its parent domain's time (`engineTime` for the engine's).
    func domainFrames(engineFrames: Int, engineTime: Int64) -> UnsafeMutableBufferPointer<Int> {
        frameCounts[0] = engineFrames
        for index in 1..<max(1, domains.count) {
            let domain = domains[index]
            let node = domain.node!
            if !node.isClockStarted {
                node.inputSampleTime = domain.parent == 0 ? engineTime : domains[domain.parent].node!.inputSampleTime
                node.isClockStarted = true
            }
            let asked = node.inputFrameCount(forOutputFrames: frameCounts[domain.parent])
            frameCounts[index] = min(max(asked, 0), domain.maximumFrameCount)
        }
        return frameCounts
    }

    /// Marks, on the render thread, the mixer inputs that `next` drops or re-sources; returns
    /// whether any must fade out before switching.
    func markFadeOuts(before next: RenderPlan) -> Bool {
        // Index loops: iterators over arrays of tuples allocate in unoptimized builds.
        var any = false
        for index in 0..<mixerInputs.count {
            let (input, source) = mixerInputs[index]
            if next.mixerSources[ObjectIdentifier(input)] != source {
                input.isFadingOut = true
                any = true
            }
        }
        return any
    }

    func clearFadeOuts() {
        for index in 0..<mixerInputs.count { mixerInputs[index].0.isFadingOut = false }
    }
}
