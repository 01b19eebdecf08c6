#if canImport(Glibc)
    import Glibc
#endif

extension AudioEngine {
    /// The plan for a changed graph. While a device runs, the nodes that must be prepared again
    /// (a new format, a larger quantum upstream of a rate-converting node) cannot be while the
    /// render thread may render them. A plan without them goes first: their mixer inputs fade
    /// out over a quantum, and what they fed hears an unconnected bus. Once the render thread
    /// renders with it they are prepared, and the plan with them is returned: their mixer
    /// inputs fade in. The gap lasts a period or two of the device. `held` names the nodes left
    /// out, if any (the caller restores them if this throws). Refused when the device does not
    /// render for 2 s.
    func compileWhileRendering(
        _ graph: inout GraphState, format: AudioFormat, held: inout Set<ObjectIdentifier>
    ) throws -> RenderPlan {
        var refuse: Set<ObjectIdentifier>? = nil
        guard isRunning else { return try compile(&graph, format: format, held: &refuse) }
        var found: Set<ObjectIdentifier>? = []
        var plan: RenderPlan
        while true {
            let count = found?.count ?? 0
            plan = try compile(&graph, format: format, held: &found)
            // A node held in this pass was still visited, and what only it consumes: again
            // without them, until nothing more is held.
            if found?.count ?? 0 == count { break }
        }
        held = found ?? []
        guard let first = held.first else { return plan }
        publish(plan, in: &graph)
        var waited = 0
        while renderedGeneration.load(ordering: .acquiring) < plan.generation {
            guard waited < 2_000_000 else {
                throw AudioGraphError.requiresStop(
                    node: graph.nodes[first]?.name ?? "a node", reason: "the device did not render for 2 s")
            }
            usleep(200)
            waited += 200
        }
        return try compile(&graph, format: format, held: &refuse, released: held)
    }

    /// Compiles the graph into a render plan: the nodes in dependency order (prepared for their
    /// formats, with their buffers), the routes into the output, the observers.
    ///
    /// A node already prepared that would be prepared again (a new format, a larger quantum) is
    /// never prepared while a device may be rendering it: when it is in `released` (the plan in
    /// use leaves it out) it is prepared; otherwise, with `held` given, it joins `held` and the
    /// plan leaves it out (its consumers see an unconnected bus, so do its taps); without
    /// `held` the change is refused. The nodes in `held` when called are left out from the start
    /// (and so is what only they consume).
    func compile(
        _ graph: inout GraphState, format: AudioFormat, held: inout Set<ObjectIdentifier>?,
        released: Set<ObjectIdentifier> = []
    ) throws -> RenderPlan {
        let skipped = held ?? []
        // Depth-first from the output: every node after the nodes it depends on.
        var order: [ObjectIdentifier] = []
        var visited: Set<ObjectIdentifier> = []
        func visit(_ id: ObjectIdentifier) {
            guard !skipped.contains(id), visited.insert(id).inserted else { return }
            for (_, connection) in (graph.inputs[id] ?? [:]).sorted(by: { $0.key < $1.key }) {
                visit(connection.source)
            }
            order.append(id)
        }
        visit(ObjectIdentifier(outputNode))
        // A tapped node renders even when nothing connects it to the output (as AVAudioEngine's
        // input node does with a tap and no connection): its tap pulls it.
        for id in graph.attachOrder where graph.taps[id]?.isEmpty == false { visit(id) }

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
            var inputCounts: [Int] = []
            for bus in 0..<busCount {
                guard let connection = connections[bus], held?.contains(connection.source) != true else {
                    inputCounts.append(0)
                    continue
                }
                let count = channelCounts[connection.source] ?? 2
                if let declared = connection.format, declared.channelCount != count {
                    throw AudioGraphError.formatMismatch(
                        node: node.name, format: declared,
                        reason: "\(graph.nodes[connection.source]?.name ?? "the source") produces \(count) channels")
                }
                guard node.accepts(AudioFormat(sampleRate: format.sampleRate, channelCount: count), onBus: bus) else {
                    throw AudioGraphError.formatMismatch(
                        node: node.name, format: AudioFormat(sampleRate: format.sampleRate, channelCount: count),
                        reason: "unsupported on bus \(bus)")
                }
                inputCounts.append(count)
            }
            if id == ObjectIdentifier(outputNode) {
                var routes: [(node: String, buffer: AudioBuffer, channels: [Int]?)] = []
                for (_, connection) in connections.sorted(by: { $0.key < $1.key }) {
                    guard held?.contains(connection.source) != true, let buffer = graph.buffers[connection.source]
                    else { continue }
                    let name = graph.nodes[connection.source]?.name ?? "a source"
                    routes.append((name, buffer, connection.channels))
                }
                routing = try OutputRouting(routes: routes, channelCount: format.channelCount)
                continue
            }
            let outputChannels = node.outputChannelCount(inputChannelCounts: inputCounts)
            channelCounts[id] = outputChannels
            let nodeFormat = AudioFormat(sampleRate: format.sampleRate, channelCount: outputChannels)
            let domain = domainOf[id] ?? 0
            // A node keeps the largest capacity it was prepared for: leaving a rate domain does not
            // prepare it again (its state, a delay's tail, goes on).
            let prepared = graph.preparedFrameCounts[id]
            let frameCapacity = max(domains[domain].maximumFrameCount, prepared ?? 0)
            if prepared != frameCapacity || node.outputFormat != nodeFormat {
                // Preparing again replaces what the node renders with: never while a device's audio
                // thread may be rendering it with the plan in use.
                if prepared != nil && isRunning && !released.contains(id) {
                    if held != nil {
                        held?.insert(id)
                        channelCounts[id] = nil
                        continue
                    }
                    throw AudioGraphError.requiresStop(
                        node: node.name,
                        reason: node.outputFormat != nodeFormat
                            ? "its format would change to \(nodeFormat)"
                            : "it would render \(frameCapacity) frames a quantum (upstream of a rate-converting node)")
                }
                try node.prepare(format: nodeFormat, maximumFrameCount: frameCapacity)
                node.outputFormat = nodeFormat
                graph.preparedFrameCounts[id] = frameCapacity
            }
            let output: AudioBuffer
            if let existing = graph.buffers[id], existing.channelCount == outputChannels,
                existing.frameCapacity == frameCapacity
            {
                output = existing
            } else {
                output = AudioBuffer(channelCount: outputChannels, frameCapacity: frameCapacity)
                graph.buffers[id] = output
            }
            let inputs = UnsafeMutableBufferPointer<Unmanaged<AudioBuffer>?>.allocate(capacity: busCount)
            for bus in 0..<busCount {
                if let connection = connections[bus], held?.contains(connection.source) != true,
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
