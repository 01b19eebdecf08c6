#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sums any number of mono or stereo inputs into a stereo output, with a volume and a pan per
/// input and an output volume. Volume and pan changes ramp across a quantum, so they never click;
/// an input that is connected fades in and one that is disconnected fades out over a quantum.
///
/// Pan law: mono inputs use equal power (−3 dB each side at centre); stereo inputs use balance
/// (panning left attenuates the right channel and vice versa).
public final class MixerNode: AudioNode, @unchecked Sendable {
    /// The most input buses a mixer has; their state is allocated up front, so the render thread
    /// never sees the bus table change.
    public static let maximumInputCount = 256

    /// Per-input settings and ramp state.
    final class Input: @unchecked Sendable {
        let volume = RenderParameter(1)
        let pan = RenderParameter(0)
        // Render-thread state.
        var currentLeft: Float = 0
        var currentRight: Float = 0
        var isSounding = false
        var isFadingOut = false
    }

    let inputStates: [Input] = (0..<MixerNode.maximumInputCount).map { _ in Input() }
    /// The mixer's output volume (linear, 0…).
    public let outputVolumeParameter = RenderParameter(1)
    private var currentOutputVolume: Float = 1
    private var hasRendered = false

    /// A mixer named `name` with every input at volume 1 and centred, and output volume 1 (the state of all
    /// `maximumInputCount` inputs is allocated here).
    public override init(name: String = "mixer") { super.init(name: name) }

    public override var inputBusCount: Int { MixerNode.maximumInputCount }

    /// Linear gain of the mixer's output (0 = silent, 1 = unity).
    public var outputVolume: Float {
        get { outputVolumeParameter.load() }
        set { outputVolumeParameter.store(max(0, newValue)) }
    }

    /// Linear gain of input `bus`.
    ///
    /// - Throws: `AudioGraphError.invalidBus` unless `bus` is in 0..<`maximumInputCount`.
    public func volume(forInputBus bus: Int) throws(AudioGraphError) -> Float { try input(bus).volume.load() }
    /// Sets the linear gain of input `bus` (1 by default; negative values become 0, no upper limit). Any
    /// thread: the render thread ramps to it over its next quantum.
    ///
    /// - Throws: `AudioGraphError.invalidBus` unless `bus` is in 0..<`maximumInputCount` (nothing changes).
    public func setVolume(_ volume: Float, forInputBus bus: Int) throws(AudioGraphError) {
        try input(bus).volume.store(max(0, volume))
    }

    /// Pan of input `bus`, −1 (left) … 1 (right).
    ///
    /// - Throws: `AudioGraphError.invalidBus` unless `bus` is in 0..<`maximumInputCount`.
    public func pan(forInputBus bus: Int) throws(AudioGraphError) -> Float { try input(bus).pan.load() }
    /// Sets the pan of input `bus`, clamped to −1 (left) … 1 (right), 0 by default. Any thread: the render
    /// thread ramps to it over its next quantum.
    ///
    /// - Throws: `AudioGraphError.invalidBus` unless `bus` is in 0..<`maximumInputCount` (nothing changes).
    public func setPan(_ pan: Float, forInputBus bus: Int) throws(AudioGraphError) {
        try input(bus).pan.store(min(1, max(-1, pan)))
    }

    /// The state of input `bus`, or the error that names the mixer and the bus.
    private func input(_ bus: Int) throws(AudioGraphError) -> Input {
        guard inputStates.indices.contains(bus) else { throw .invalidBus(node: name, bus: bus) }
        return inputStates[bus]
    }

    public override func reset() {
        for input in inputStates {
            input.currentLeft = 0
            input.currentRight = 0
            input.isSounding = false
            input.isFadingOut = false
        }
        hasRendered = false
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        let left = output.channel(0)
        let right = output.channel(1)
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        let step = 1 / Float(max(frameCount, 1))
        for bus in 0..<inputs.count {
            let state = inputStates[bus]
            guard let buffer = inputs[bus] else {
                state.isSounding = false
                continue
            }
            var targetLeft: Float = 0
            var targetRight: Float = 0
            if !state.isFadingOut {
                let volume = state.volume.load()
                let pan = state.pan.load()
                if buffer.channelCount == 1 {
                    let angle = (pan + 1) * Float.pi / 4
                    targetLeft = volume * cosf(angle)
                    targetRight = volume * sinf(angle)
                } else {
                    targetLeft = volume * min(1, 1 - pan)
                    targetRight = volume * min(1, 1 + pan)
                }
            }
            if !state.isSounding {
                // An input connected while the mixer is already playing starts from silence and
                // ramps up; the inputs present from the first quantum start at their level.
                state.currentLeft = hasRendered ? 0 : targetLeft
                state.currentRight = hasRendered ? 0 : targetRight
                state.isSounding = true
            }
            let sourceLeft = buffer.channel(0)
            let sourceRight = buffer.channel(buffer.channelCount > 1 ? 1 : 0)
            let startLeft = state.currentLeft
            let startRight = state.currentRight
            if startLeft == targetLeft && startRight == targetRight {
                for frame in 0..<frameCount {
                    left[frame] += sourceLeft[frame] * targetLeft
                    right[frame] += sourceRight[frame] * targetRight
                }
            } else {
                let deltaLeft = (targetLeft - startLeft) * step
                let deltaRight = (targetRight - startRight) * step
                for frame in 0..<frameCount {
                    let position = Float(frame + 1)
                    left[frame] += sourceLeft[frame] * (startLeft + deltaLeft * position)
                    right[frame] += sourceRight[frame] * (startRight + deltaRight * position)
                }
            }
            state.currentLeft = targetLeft
            state.currentRight = targetRight
        }
        let target = outputVolumeParameter.load()
        if !hasRendered {
            currentOutputVolume = target
            hasRendered = true
        }
        if target != 1 || currentOutputVolume != 1 {
            let start = currentOutputVolume
            let delta = (target - start) * step
            for frame in 0..<frameCount {
                let gain = start + delta * Float(frame + 1)
                left[frame] *= gain
                right[frame] *= gain
            }
            currentOutputVolume = target
        }
    }
}
