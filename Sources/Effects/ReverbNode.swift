import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reverb presets, as AVAudioUnitReverb names them, each with the decay it is built for.
public enum ReverbPreset: String, CaseIterable, Hashable, Sendable {
    case smallRoom, mediumRoom, largeRoom, mediumHall, largeHall, plate, mediumChamber, largeChamber, cathedral

    /// The cases in order, stored once (`allCases` allocates a new array on every call).
    static let table = ReverbPreset.allCases

    /// The target reverberation time: seconds for the level to fall by 60 dB, in the 1 kHz octave.
    public var reverberationTime: Double {
        switch self {
        case .smallRoom: return 0.4
        case .mediumRoom: return 0.7
        case .largeRoom: return 1.1
        case .mediumHall: return 1.8
        case .largeHall: return 2.6
        case .plate: return 1.8
        case .mediumChamber: return 1.2
        case .largeChamber: return 1.8
        case .cathedral: return 5
        }
    }

    /// Seconds before the reverberation starts.
    var preDelay: Double {
        switch self {
        case .smallRoom: return 0.005
        case .mediumRoom: return 0.008
        case .largeRoom: return 0.012
        case .mediumHall: return 0.020
        case .largeHall: return 0.030
        case .plate: return 0.002
        case .mediumChamber: return 0.010
        case .largeChamber: return 0.015
        case .cathedral: return 0.040
        }
    }

    /// Scale of the delay lines (the room's size).
    var size: Double {
        switch self {
        case .smallRoom: return 0.45
        case .mediumRoom: return 0.6
        case .largeRoom: return 0.75
        case .mediumHall, .largeChamber: return 1.0
        case .largeHall: return 1.0
        case .plate: return 0.55
        case .mediumChamber: return 0.8
        case .cathedral: return 1.0
        }
    }

    /// Decay time at Nyquist relative to the mid decay (high frequencies die sooner; a plate is bright).
    var highDecayRatio: Double { self == .plate ? 0.8 : 0.55 }
}

/// A stereo reverb, the counterpart of AVAudioUnitReverb: a 16-line feedback delay network (Jot)
/// with a Hadamard feedback matrix, per-line damping filters that set the decay time (and a faster
/// decay of high frequencies), four input allpass diffusers per channel for a fast build-up of
/// echo density, and decorrelated left and right outputs. Each preset sets the decay time it is
/// named for (`ReverbPreset.reverberationTime`, measured in the 1 kHz octave), its pre-delay and
/// its size. `wetDryMix` crossfades linearly, 0 (dry only, bit for bit) to 100 (wet only), and
/// glides. Denormal states are flushed, so silence after a loud sound costs nothing extra.
///
/// The plate preset uses the same network voiced bright and dense (not Dattorro's plate topology).
public final class ReverbNode: AudioNode, @unchecked Sendable {
    /// The preset; changing it rebuilds the network (a short break in the tail).
    public var preset: ReverbPreset {
        get { ReverbPreset.table[presetIndex.load(ordering: .relaxed)] }
        set { presetIndex.store(ReverbPreset.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// Percent of reverberated signal, 0 … 100.
    public var wetDryMix: Double {
        get { Double(bitPattern: mixBits.load(ordering: .relaxed)) }
        set { mixBits.store(min(max(newValue, 0), 100).bitPattern, ordering: .relaxed) }
    }

    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "preset", "preset", range: 0...Double(ReverbPreset.table.count - 1), default: 3, unit: .choice,
            choices: ReverbPreset.table.map(\.rawValue)),
        EffectParameter("mix", "wet/dry mix", range: 0...100, default: 50, unit: .percent),
    ]

    static let lines = 16
    /// Base line lengths in ms (mutually prime once in samples), scaled by the preset's size.
    static let baseLengths: [Double] = [
        23.1, 26.9, 29.3, 31.9, 34.7, 37.3, 39.7, 42.1, 44.9, 47.3, 50.9, 53.3, 56.9, 59.3, 63.1, 67.9,
    ]
    /// Input diffuser lengths in ms and their gain.
    static let diffuserLengths: [Double] = [4.77, 3.59, 12.73, 9.3]
    static let stages = 4
    static let diffuserGain = 0.7
    /// Levels below this (−300 dB) become exact zeros: no denormals, and a tail that ends.
    static let flushLevel: Float = 1e-15

    private let presetIndex = Atomic<Int>(3)
    private let mixBits = Atomic<UInt64>(50.0.bitPattern)

    // Render state (preallocated in prepare).
    private var sampleRate = 44_100.0
    private var builtPreset = -1
    private var lineStorage: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var lineOffsets = [Int](repeating: 0, count: 17)
    private var lineLengths = [Int](repeating: 1, count: 16)
    private var linePositions = [Int](repeating: 0, count: 16)
    private var lineGain = [Float](repeating: 0, count: 16)
    private var lineDamping = [Float](repeating: 0, count: 16)
    private var lineFilter = [Float](repeating: 0, count: 16)
    private var diffuserStorage: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var diffuserOffsets = [Int](repeating: 0, count: 2 * ReverbNode.stages + 1)
    private var diffuserLengthsInSamples = [Int](repeating: 1, count: 2 * ReverbNode.stages)
    private var diffuserPositions = [Int](repeating: 0, count: 2 * ReverbNode.stages)
    private var preDelayStorage: UnsafeMutablePointer<Float> = .allocate(capacity: 2)
    private var preDelayLength = 1
    private var preDelayCapacity = 1
    private var preDelayPosition = 0
    private var mixNow = 0.5
    private var scratch = [Float](repeating: 0, count: 16)

    public init(preset: ReverbPreset = .mediumHall, wetDryMix: Double = 50) {
        super.init(name: "reverb")
        self.preset = preset
        self.wetDryMix = wetDryMix
    }

    deinit {
        lineStorage.deallocate()
        diffuserStorage.deallocate()
        preDelayStorage.deallocate()
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        // Room for the largest preset.
        let longest = ReverbPreset.table.map(\.size).max()!
        let lineCapacity = Self.baseLengths.reduce(0) { $0 + Int($1 / 1_000 * longest * sampleRate) + 2 }
        lineStorage.deallocate()
        lineStorage = .allocate(capacity: lineCapacity)
        let diffuserCapacity =
            2 * Self.diffuserLengths.reduce(0) { $0 + Int($1 * 1.2 / 1_000 * sampleRate) + 2 }
        diffuserStorage.deallocate()
        diffuserStorage = .allocate(capacity: diffuserCapacity)
        preDelayCapacity = Int(0.05 * sampleRate) + 2
        preDelayStorage.deallocate()
        preDelayStorage = .allocate(capacity: 2 * preDelayCapacity)
        builtPreset = -1
        mixNow = wetDryMix / 100
        build(preset)
    }

    public override func reset() { build(preset) }

    /// Sets the network up for a preset and clears it (render thread on a preset change: only
    /// preallocated memory is touched).
    private func build(_ preset: ReverbPreset) {
        builtPreset = ReverbPreset.table.firstIndex(of: preset)!
        var offset = 0
        let mid = preset.reverberationTime
        let high = mid * preset.highDecayRatio
        let omega = 2 * Double.pi * 1_000 / sampleRate
        for line in 0..<Self.lines {
            var length = Int(Self.baseLengths[line] / 1_000 * preset.size * sampleRate)
            length |= 1  // odd lengths, less shared factors
            lineOffsets[line] = offset
            lineLengths[line] = length
            linePositions[line] = 0
            offset += length + 1
            // Damping: a one-pole low-pass whose gain at Nyquist gives the high decay; its gain at
            // DC is set so that the loop's gain at 1 kHz gives the mid decay exactly.
            let seconds = Double(length) / sampleRate
            let gainMid = pow(10, -3 * seconds / mid)
            let gainHigh = pow(10, -3 * seconds / high)
            var gainDC = gainMid
            var pole = 0.0
            for _ in 0..<4 {
                pole = (gainDC - gainHigh) / (gainDC + gainHigh)
                let response = (1 - pole) / ((1 - 2 * pole * cos(omega) + pole * pole).squareRoot())
                gainDC = gainMid / response
            }
            lineGain[line] = Float(gainDC * (1 - pole))
            lineDamping[line] = Float(pole)
            lineFilter[line] = 0
        }
        lineOffsets[Self.lines] = offset
        lineStorage.update(repeating: 0, count: offset)
        var diffuserOffset = 0
        for channel in 0..<2 {
            for stage in 0..<Self.stages {
                let index = channel * Self.stages + stage
                // The right channel's diffusers are slightly longer: decorrelated inputs.
                let scale = channel == 0 ? 1 : 1.113
                let length = Int(Self.diffuserLengths[stage] * scale / 1_000 * sampleRate) | 1
                diffuserOffsets[index] = diffuserOffset
                diffuserLengthsInSamples[index] = length
                diffuserPositions[index] = 0
                diffuserOffset += length + 1
            }
        }
        diffuserStorage.update(repeating: 0, count: diffuserOffset)
        preDelayLength = max(1, min(preDelayCapacity - 1, Int(preset.preDelay * sampleRate)))
        preDelayPosition = 0
        preDelayStorage.update(repeating: 0, count: 2 * preDelayCapacity)
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        if presetIndex.load(ordering: .relaxed) != builtPreset { build(preset) }
        let mixTarget = wetDryMix / 100
        let mixStep = 1 / (0.020 * sampleRate)
        let left = input.channel(0)
        let right = input.channel(min(1, input.channelCount - 1))
        let outLeft = output.channel(0)
        let outRight = output.channel(min(1, output.channelCount - 1))
        if mixTarget == 0 && mixNow == 0 {
            // Dry only: the input, bit for bit (the network keeps running so the tail is there
            // when the mix comes back up; here it rests).
            outLeft.update(from: left, count: frameCount)
            if output.channelCount > 1 { outRight.update(from: right, count: frameCount) }
            return
        }
        lineGain.withUnsafeBufferPointer { gains in
            lineDamping.withUnsafeBufferPointer { damping in
                lineFilter.withUnsafeMutableBufferPointer { filters in
                    scratch.withUnsafeMutableBufferPointer { values in
                        for frame in 0..<frameCount {
                            let dryLeft = left[frame]
                            let dryRight = right[frame]
                            // Pre-delay.
                            let slot = preDelayPosition
                            let readSlot = (slot + preDelayCapacity - preDelayLength) % preDelayCapacity
                            preDelayStorage[2 * slot] = dryLeft
                            preDelayStorage[2 * slot + 1] = dryRight
                            var inLeft = preDelayStorage[2 * readSlot]
                            var inRight = preDelayStorage[2 * readSlot + 1]
                            preDelayPosition = (slot + 1) % preDelayCapacity
                            // Input diffusion: four Schroeder allpasses per channel.
                            inLeft = diffuse(inLeft, channel: 0)
                            inRight = diffuse(inRight, channel: 1)
                            // Read the lines, damp them.
                            for line in 0..<Self.lines {
                                let base = lineStorage + lineOffsets[line]
                                let value = base[linePositions[line]]
                                var filtered = gains[line] * value + damping[line] * filters[line]
                                if abs(filtered) < Self.flushLevel { filtered = 0 }
                                filters[line] = filtered
                                values[line] = filtered
                            }
                            // Outputs: two orthogonal sign patterns over the lines.
                            var wetLeft: Float = 0
                            var wetRight: Float = 0
                            for line in 0..<Self.lines {
                                wetLeft += (line & 1 == 0 ? 1 : -1) * values[line]
                                wetRight += ((line >> 1) & 1 == 0 ? 1 : -1) * values[line]
                            }
                            wetLeft *= 0.25
                            wetRight *= 0.25
                            // Hadamard feedback (normalized), then the inputs added, written back.
                            hadamard(values)
                            for line in 0..<Self.lines {
                                let base = lineStorage + lineOffsets[line]
                                let input = line & 1 == 0 ? inLeft : inRight
                                let written = values[line] + input * 0.35
                                // A fading tail must not linger as denormals.
                                base[linePositions[line]] = abs(written) < Self.flushLevel ? 0 : written
                                linePositions[line] += 1
                                if linePositions[line] >= lineLengths[line] { linePositions[line] = 0 }
                            }
                            // Mix.
                            if mixNow != mixTarget {
                                mixNow =
                                    mixTarget > mixNow
                                    ? min(mixTarget, mixNow + mixStep) : max(mixTarget, mixNow - mixStep)
                            }
                            let wet = Float(mixNow)
                            outLeft[frame] = dryLeft + (wetLeft - dryLeft) * wet
                            if output.channelCount > 1 { outRight[frame] = dryRight + (wetRight - dryRight) * wet }
                        }

                    }
                }
            }
        }
    }

    @inline(__always)
    private func diffuse(_ sample: Float, channel: Int) -> Float {
        var x = sample
        let g = Float(Self.diffuserGain)
        for stage in 0..<Self.stages {
            let index = channel * Self.stages + stage
            let base = diffuserStorage + diffuserOffsets[index]
            let position = diffuserPositions[index]
            let delayed = base[position]
            var v = x + g * delayed
            if abs(v) < Self.flushLevel { v = 0 }
            base[position] = v
            x = delayed - g * v
            diffuserPositions[index] = position + 1 >= diffuserLengthsInSamples[index] ? 0 : position + 1
        }
        return x
    }

    /// An in-place fast Walsh-Hadamard transform of 16 values, scaled to be orthonormal.
    @inline(__always)
    private func hadamard(_ values: UnsafeMutableBufferPointer<Float>) {
        var span = 1
        while span < Self.lines {
            var start = 0
            while start < Self.lines {
                for index in start..<(start + span) {
                    let a = values[index]
                    let b = values[index + span]
                    values[index] = a + b
                    values[index + span] = a - b
                }
                start += 2 * span
            }
            span *= 2
        }
        for index in 0..<Self.lines { values[index] *= 0.25 }  // 1/√16
    }
}
