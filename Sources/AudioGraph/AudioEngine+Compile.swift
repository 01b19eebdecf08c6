extension AudioEngine {
    /// Compiles the graph into a render plan: the nodes in dependency order (prepared for their
    /// formats, with their buffers), the routes into the output, the observers.
    func compile(_ graph: inout GraphState, format: AudioFormat) throws -> RenderPlan {
        // Depth-first from the output: every node after the nodes it depends on.
        var order: [ObjectIdentifier] = []
        var visited: Set<ObjectIdentifier> = []
        func visit(_ id: ObjectIdentifier) {
            guard visited.insert(id).inserted else { return }
            for (_, connection) in (graph.inputs[id] ?? [:]).sorted(by: { $0.key < $1.key }) {
                visit(connection.source)
            }
            order.append(id)
        }
        visit(ObjectIdentifier(outputNode))
        // A tapped node renders even when nothing connects it to the output (as AVAudioEngine's
        // input node does with a tap and no connection): its tap pulls it.
        for id in graph.attachOrder where graph.taps[id]?.isEmpty == false { visit(id) }

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
                guard let connection = connections[bus] else {
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
                    guard let buffer = graph.buffers[connection.source] else { continue }
                    let name = graph.nodes[connection.source]?.name ?? "a source"
                    routes.append((name, buffer, connection.channels))
                }
                routing = try OutputRouting(routes: routes, channelCount: format.channelCount)
                continue
            }
            let outputChannels = node.outputChannelCount(inputChannelCounts: inputCounts)
            channelCounts[id] = outputChannels
            let nodeFormat = AudioFormat(sampleRate: format.sampleRate, channelCount: outputChannels)
            if !graph.preparedNodes.contains(id) || node.outputFormat != nodeFormat {
                try node.prepare(format: nodeFormat, maximumFrameCount: graph.maximumFrameCount)
                node.outputFormat = nodeFormat
                graph.preparedNodes.insert(id)
            }
            let output: AudioBuffer
            if let existing = graph.buffers[id], existing.channelCount == outputChannels,
                existing.frameCapacity == graph.maximumFrameCount
            {
                output = existing
            } else {
                output = AudioBuffer(channelCount: outputChannels, frameCapacity: graph.maximumFrameCount)
                graph.buffers[id] = output
            }
            let inputs = UnsafeMutableBufferPointer<Unmanaged<AudioBuffer>?>.allocate(capacity: busCount)
            for bus in 0..<busCount {
                if let connection = connections[bus], let buffer = graph.buffers[connection.source] {
                    inputs[bus] = Unmanaged.passUnretained(buffer)
                    if let mixer = node as? MixerNode {
                        mixerInputs.append((mixer.inputStates[bus], connection.source))
                    }
                } else {
                    inputs[bus] = nil
                }
            }
            steps.append(RenderPlan.Step(node: node, output: output, inputs: inputs, taps: graph.taps[id] ?? []))
        }
        graph.generation += 1
        return RenderPlan(
            generation: graph.generation, sampleRate: format.sampleRate, maximumFrameCount: graph.maximumFrameCount,
            steps: steps,
            routing: routing, observers: graph.observers, mixerInputs: mixerInputs)
    }
}
