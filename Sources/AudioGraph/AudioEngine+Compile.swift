#if canImport(Glibc)
    import Glibc
#endif

extension AudioEngine {
    /// How `compile` treats the nodes a change would prepare again (a new format, a larger
    /// quantum upstream of a rate-converting node) while a device may render them.
    struct Preparation {
        /// Whether a device runs (read once per change).
        var running: Bool
        /// Whether such a node is left out of the plan (held) rather than the change refused.
        var holding: Bool
        /// The nodes left out, with the channels each will put out (what its consumers are
        /// compiled for).
        var held: [ObjectIdentifier: Int] = [:]
        /// Nodes the render thread no longer renders: prepared freely.
        var released: Set<ObjectIdentifier> = []
    }

    /// The plan for a changed graph. While a device runs, a node that must be prepared again
    /// cannot be while the render thread may render it (with the plan in use or one published
    /// since). A plan without such nodes goes first: their mixer inputs fade out over a quantum,
    /// and their other consumers hear an unconnected bus. Once the render thread renders with
    /// it, they are prepared, and the plan with them is returned: their mixer inputs fade in.
    /// The gap lasts a period or two of the device (the graph's lock is held meanwhile). A node
    /// feeding the output directly, or another node, stops and starts without a fade; taps on a
    /// held node miss the gap, and MIDI sent to it meanwhile plays when it is back. `released`
    /// names the nodes prepared this way, once they may be (the caller restores them if this
    /// throws). Refused when the device does not render for 2 s.
    func compileWhileRendering(
        _ graph: inout GraphState, format: AudioFormat, running: Bool, released: inout Set<ObjectIdentifier>
    ) throws -> RenderPlan {
        var preparation = Preparation(running: running, holding: running)
        var plan: RenderPlan
        while true {
            let count = preparation.held.count
            plan = try compile(&graph, format: format, preparation: &preparation)
            // A node held in this pass was still visited, and what only it consumes: again
            // without them, until nothing more is held.
            if preparation.held.count == count { break }
        }
        guard let first = preparation.held.keys.first else { return plan }
        publish(plan, in: &graph)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(2)
        while renderedGeneration.load(ordering: .acquiring) < plan.generation {
            guard clock.now < deadline else {
                throw AudioGraphError.requiresStop(
                    node: graph.nodes[first]?.name ?? "a node", reason: "the device did not render for 2 s")
            }
            usleep(200)
        }
        released = Set(preparation.held.keys)
        var final = Preparation(running: running, holding: false, released: released)
        return try compile(&graph, format: format, preparation: &final)
    }

    /// The nodes the render thread may render: those of the plan it uses and of every plan
    /// published since.
    func nodesInUse(_ graph: GraphState) -> Set<ObjectIdentifier> {
        let inUse = renderedGeneration.load(ordering: .acquiring)
        var nodes: Set<ObjectIdentifier> = []
        for plan in graph.plans where plan.generation >= inUse {
            for step in plan.steps { nodes.insert(ObjectIdentifier(step.node)) }
        }
        return nodes
    }

    /// Compiles the graph into a render plan: the nodes in dependency order (prepared for their
    /// formats, with their buffers), the routes into the output, the observers.
    ///
    /// A node that would be prepared again while a device may render it (`nodesInUse`) is
    /// prepared only when it is in `preparation.released`; otherwise, when holding, it joins
    /// `preparation.held` and the plan leaves it out (its consumers are compiled for what it
    /// will put out but get an unconnected bus, and its taps do not run); without holding, the
    /// change is refused. The nodes held when called are left out from the start (and so is
    /// what only they consume).
    func compile(_ graph: inout GraphState, format: AudioFormat, preparation: inout Preparation) throws -> RenderPlan {
        let inUse = preparation.running ? nodesInUse(graph) : []
        let order = renderOrder(graph, skipping: preparation.held)
        let (domainOf, domains) = try Self.rateDomains(
            order: order, graph: graph, output: ObjectIdentifier(outputNode))
        var channelCounts: [ObjectIdentifier: Int] = [:]
        var steps: [RenderPlan.Step] = []
        var mixerInputs: [(MixerNode.Input, ObjectIdentifier)] = []
        var routing = OutputRouting.none
        for id in order {
            guard let node = graph.nodes[id] else { continue }
            let connections = graph.inputs[id] ?? [:]
            let busCount = connections.isEmpty ? 0 : (connections.keys.max() ?? -1) + 1
            let inputCounts = try Self.inputChannelCounts(
                of: node, connections: connections, busCount: busCount, channelCounts: channelCounts,
                held: preparation.held, graph: graph, sampleRate: format.sampleRate)
            if id == ObjectIdentifier(outputNode) {
                routing = try Self.outputRouting(
                    connections, graph: graph, held: preparation.held, channelCount: format.channelCount)
                continue
            }
            let outputChannels = node.outputChannelCount(inputChannelCounts: inputCounts)
            channelCounts[id] = outputChannels
            let nodeFormat = AudioFormat(sampleRate: format.sampleRate, channelCount: outputChannels)
            let domain = domainOf[id] ?? 0
            // A node keeps the largest capacity it was prepared for: leaving a rate domain does not
            // prepare it again (its state, a delay's tail, goes on).
            let frameCapacity = max(domains[domain].maximumFrameCount, graph.preparedFrameCounts[id] ?? 0)
            let isReady = try Self.prepareIfNeeded(
                node, id, format: nodeFormat, frameCapacity: frameCapacity, inUse: inUse, graph: &graph,
                preparation: &preparation)
            guard isReady else { continue }
            let output = Self.outputBuffer(
                for: id, channelCount: outputChannels, frameCapacity: frameCapacity, graph: &graph)
            let inputs = UnsafeMutableBufferPointer<Unmanaged<AudioBuffer>?>.allocate(capacity: busCount)
            for bus in 0..<busCount {
                if let connection = connections[bus], preparation.held[connection.source] == nil,
                    let buffer = graph.buffers[connection.source]
                {
                    inputs[bus] = Unmanaged.passUnretained(buffer)
                    if let mixer = node as? MixerNode {
                        mixerInputs.append((mixer.inputStates[bus], connection.source))
                    }
                } else {
                    inputs[bus] = nil
                }
            }
            steps.append(
                RenderPlan.Step(node: node, output: output, inputs: inputs, taps: graph.taps[id] ?? [], domain: domain))
        }
        graph.generation += 1
        return RenderPlan(
            generation: graph.generation, sampleRate: format.sampleRate, maximumFrameCount: graph.maximumFrameCount,
            steps: steps, domains: domains,
            routing: routing, observers: graph.observers, mixerInputs: mixerInputs)
    }

    /// The nodes to render, every node after the nodes it depends on: depth-first from the
    /// output, then the tapped nodes nothing connects to the output. The nodes in `skipped` are
    /// left out, and so is what only they consume.
    func renderOrder(_ graph: GraphState, skipping skipped: [ObjectIdentifier: Int]) -> [ObjectIdentifier] {
        var order: [ObjectIdentifier] = []
        var visited: Set<ObjectIdentifier> = []
        func visit(_ id: ObjectIdentifier) {
            guard skipped[id] == nil, visited.insert(id).inserted else { return }
            for (_, connection) in (graph.inputs[id] ?? [:]).sorted(by: { $0.key < $1.key }) {
                visit(connection.source)
            }
            order.append(id)
        }
        visit(ObjectIdentifier(outputNode))
        // A tapped node renders even when nothing connects it to the output (as AVAudioEngine's
        // input node does with a tap and no connection): its tap pulls it.
        for id in graph.attachOrder where graph.taps[id]?.isEmpty == false { visit(id) }
        return order
    }

    /// The channel count on each of `node`'s `busCount` input buses (0 where nothing is
    /// connected): what its source puts out (a held source: what it will). Throws when a
    /// connection declared another count, or the node does not accept the format on that bus.
    static func inputChannelCounts(
        of node: AudioNode, connections: [Int: Connection], busCount: Int, channelCounts: [ObjectIdentifier: Int],
        held: [ObjectIdentifier: Int], graph: GraphState, sampleRate: Double
    ) throws -> [Int] {
        var inputCounts: [Int] = []
        for bus in 0..<busCount {
            guard let connection = connections[bus] else {
                inputCounts.append(0)
                continue
            }
            let count = held[connection.source] ?? channelCounts[connection.source] ?? 2
            if let declared = connection.format, declared.channelCount != count {
                throw AudioGraphError.formatMismatch(
                    node: node.name, format: declared,
                    reason: "\(graph.nodes[connection.source]?.name ?? "the source") produces \(count) channels")
            }
            guard node.accepts(AudioFormat(sampleRate: sampleRate, channelCount: count), onBus: bus) else {
                throw AudioGraphError.formatMismatch(
                    node: node.name, format: AudioFormat(sampleRate: sampleRate, channelCount: count),
                    reason: "unsupported on bus \(bus)")
            }
            inputCounts.append(count)
        }
        return inputCounts
    }

    /// The routes into the output node, bus by bus: each rendered source's buffer onto the
    /// output's channels (held sources left out).
    static func outputRouting(
        _ connections: [Int: Connection], graph: GraphState, held: [ObjectIdentifier: Int], channelCount: Int
    ) throws -> OutputRouting {
        var routes: [(node: String, buffer: AudioBuffer, channels: [Int]?)] = []
        for (_, connection) in connections.sorted(by: { $0.key < $1.key }) {
            guard held[connection.source] == nil, let buffer = graph.buffers[connection.source]
            else { continue }
            let name = graph.nodes[connection.source]?.name ?? "a source"
            routes.append((name, buffer, connection.channels))
        }
        return try OutputRouting(routes: routes, channelCount: channelCount)
    }

    /// Prepares `node` for `format` and `frameCapacity` when it was prepared otherwise. Returns
    /// false when it may not be prepared now (a device may render it: see `compile`) and is held
    /// instead; throws when it may not and is not to be held.
    static func prepareIfNeeded(
        _ node: AudioNode, _ id: ObjectIdentifier, format: AudioFormat, frameCapacity: Int,
        inUse: Set<ObjectIdentifier>, graph: inout GraphState, preparation: inout Preparation
    ) throws -> Bool {
        guard graph.preparedFrameCounts[id] != frameCapacity || node.outputFormat != format else { return true }
        // Preparing again replaces what the node renders with: never while a device's audio
        // thread may be rendering it with the plan in use.
        if inUse.contains(id) && !preparation.released.contains(id) {
            if preparation.holding {
                preparation.held[id] = format.channelCount
                return false
            }
            throw AudioGraphError.requiresStop(
                node: node.name,
                reason: node.outputFormat != format
                    ? "its format would change to \(format)"
                    : "it would render \(frameCapacity) frames a quantum (upstream of a rate-converting node)")
        }
        try node.prepare(format: format, maximumFrameCount: frameCapacity)
        node.outputFormat = format
        graph.preparedFrameCounts[id] = frameCapacity
        return true
    }

    /// The node's output buffer: the one it had if it still fits, else a new one (kept in the graph).
    static func outputBuffer(
        for id: ObjectIdentifier, channelCount: Int, frameCapacity: Int, graph: inout GraphState
    ) -> AudioBuffer {
        if let existing = graph.buffers[id], existing.channelCount == channelCount,
            existing.frameCapacity == frameCapacity
        {
            return existing
        }
        let output = AudioBuffer(channelCount: channelCount, frameCapacity: frameCapacity)
        graph.buffers[id] = output
        return output
    }

    /// The rate domains of the nodes in `order` (upstream first): 0 for the nodes that render at
    /// the engine's pace, and one per rate-converting node for the nodes upstream of it, each
    /// with the node, the domain it renders in itself and the most frames asked of its input.
    /// Throws when a node would render in two domains.
    static func rateDomains(
        order: [ObjectIdentifier], graph: GraphState, output: ObjectIdentifier
    ) throws -> (domainOf: [ObjectIdentifier: Int], domains: [RenderPlan.Domain]) {
        var consumers: [ObjectIdentifier: [ObjectIdentifier]] = [:]
        let rendered = Set(order)
        for (destination, buses) in graph.inputs where rendered.contains(destination) {
            for connection in buses.values { consumers[connection.source, default: []].append(destination) }
        }
        var domainOf: [ObjectIdentifier: Int] = [output: 0]
        var inputDomain: [ObjectIdentifier: Int] = [:]
        var domains = [RenderPlan.Domain(node: nil, parent: 0, maximumFrameCount: graph.maximumFrameCount)]
        // Downstream first: every consumer of a node is placed before the node.
        for id in order.reversed() where id != output {
            let found = Set((consumers[id] ?? []).map { inputDomain[$0] ?? domainOf[$0] ?? 0 })
            guard found.count <= 1 else {
                let name = graph.nodes[id]?.name ?? "a node"
                throw AudioGraphError.mixedRates(
                    node: name,
                    reason: "a rate-converting node (varispeed, time-pitch) renders its input at its own pace; "
                        + "give \(name) only that destination")
            }
            let domain = found.first ?? 0
            domainOf[id] = domain
            if let converter = graph.nodes[id] as? RateConvertingNode {
                inputDomain[id] = domains.count
                domains.append(
                    RenderPlan.Domain(
                        node: converter, parent: domain,
                        maximumFrameCount: max(
                            1, converter.maximumInputFrameCount(forOutputFrames: domains[domain].maximumFrameCount))))
            }
        }
        return (domainOf, domains)
    }
}

extension AudioEngine {
    // MARK: Compiling

    /// Applies a graph change and, if the engine is prepared, compiles and publishes a new plan
    /// (while a device runs, through a plan without the nodes to prepare again: see
    /// `compileWhileRendering`).
    func mutate(_ change: (inout GraphState) throws -> Void) throws {
        let running = isRunning
        try state.withLock { graph in
            // Transactional: a change that does not compile leaves the graph as it was.
            let before = graph
            try change(&graph)
            guard let format = graph.format else { return }
            var released: Set<ObjectIdentifier> = []
            do {
                publish(
                    try compileWhileRendering(&graph, format: format, running: running, released: &released),
                    in: &graph)
            } catch {
                // The plans stay (the render thread may use the newest), numbered on.
                let (plans, generation) = (graph.plans, graph.generation)
                graph = before
                (graph.plans, graph.generation) = (plans, generation)
                // Back to the graph as it was, in a plan of its own if one without some of its
                // nodes was published: the nodes prepared for the change prepared for it again
                // (the render thread no longer renders them); any still rendered that would
                // need it are left out rather than refused.
                if plans.last?.generation != before.plans.last?.generation, let format = graph.format {
                    var restore = Preparation(running: true, holding: true, released: released)
                    if let plan = try? compile(&graph, format: format, preparation: &restore) {
                        publish(plan, in: &graph)
                    }
                }
                throw error
            }
        }
    }

    /// Makes `plan` the one the render thread takes next, and frees the plans older than the
    /// one it uses (never the newest).
    func publish(_ plan: RenderPlan, in graph: inout GraphState) {
        graph.plans.append(plan)
        publishedPlan.store(Int(bitPattern: Unmanaged.passUnretained(plan).toOpaque()), ordering: .releasing)
        let inUse = renderedGeneration.load(ordering: .acquiring)
        graph.plans.removeAll { $0.generation < inUse && $0 !== plan }
    }

    static func isUpstream(
        _ candidate: ObjectIdentifier, of node: ObjectIdentifier, in graph: GraphState
    ) -> Bool {
        var stack = [node]
        var seen: Set<ObjectIdentifier> = []
        while let current = stack.popLast() {
            if current == candidate { return true }
            guard seen.insert(current).inserted else { continue }
            for connection in (graph.inputs[current] ?? [:]).values { stack.append(connection.source) }
        }
        return false
    }
}
