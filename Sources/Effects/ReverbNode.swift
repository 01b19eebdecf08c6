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
    // Per-line and per-diffuser state in fixed, preallocated memory: the render loop reads it
    // through local pointers (no array bounds or exclusivity checks per sample).
    private let lineOffsets = UnsafeMutablePointer<Int>.allocate(capacity: ReverbNode.lines + 1)
    private let lineLengths = UnsafeMutablePointer<Int>.allocate(capacity: ReverbNode.lines)
    private let linePositions = UnsafeMutablePointer<Int>.allocate(capacity: ReverbNode.lines)
    private let lineGain = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)
    private let lineDamping = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)
    private let lineFilter = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)
    private var diffuserStorage: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private let diffuserOffsets = UnsafeMutablePointer<Int>.allocate(capacity: 2 * ReverbNode.stages + 1)
    private let diffuserLengthsInSamples = UnsafeMutablePointer<Int>.allocate(capacity: 2 * ReverbNode.stages)
    private let diffuserPositions = UnsafeMutablePointer<Int>.allocate(capacity: 2 * ReverbNode.stages)
    private var preDelayStorage: UnsafeMutablePointer<Float> = .allocate(capacity: 2)
    private var preDelayLength = 1
    private var preDelayCapacity = 1
    private var preDelayPosition = 0
    private var mixNow = 0.5
    private let scratch = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)

    public init(preset: ReverbPreset = .mediumHall, wetDryMix: Double = 50) {
        lineOffsets.initialize(repeating: 0, count: Self.lines + 1)
        lineLengths.initialize(repeating: 1, count: Self.lines)
        linePositions.initialize(repeating: 0, count: Self.lines)
        lineGain.initialize(repeating: 0, count: Self.lines)
        lineDamping.initialize(repeating: 0, count: Self.lines)
        lineFilter.initialize(repeating: 0, count: Self.lines)
        diffuserOffsets.initialize(repeating: 0, count: 2 * Self.stages + 1)
        diffuserLengthsInSamples.initialize(repeating: 1, count: 2 * Self.stages)
        diffuserPositions.initialize(repeating: 0, count: 2 * Self.stages)
        scratch.initialize(repeating: 0, count: Self.lines)
        super.init(name: "reverb")
        self.preset = preset
        self.wetDryMix = wetDryMix
    }

    deinit {
        lineStorage.deallocate()
        diffuserStorage.deallocate()
        preDelayStorage.deallocate()
        for pointer in [
            lineOffsets, lineLengths, linePositions, diffuserOffsets, diffuserLengthsInSamples, diffuserPositions,
        ] {
            pointer.deallocate()
        }
        for pointer in [lineGain, lineDamping, lineFilter, scratch] { pointer.deallocate() }
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
        let stereoOut = output.channelCount > 1
        if mixTarget == 0 && mixNow == 0 {
            // Dry only: the input, bit for bit (the network rests).
            outLeft.update(from: left, count: frameCount)
            if stereoOut { outRight.update(from: right, count: frameCount) }
            return
        }
        // Everything the loop touches, in locals.
        let lines = Self.lines
        let stages = Self.stages
        let storage = lineStorage
        let offsets = lineOffsets
        let lengths = lineLengths
        let positions = linePositions
        let gains = lineGain
        let damping = lineDamping
        let filters = lineFilter
        let values = scratch
        let diffusers = diffuserStorage
        let diffuserOffsets = self.diffuserOffsets
        let diffuserLengths = diffuserLengthsInSamples
        let diffuserPositions = self.diffuserPositions
        let g = Float(Self.diffuserGain)
        let flush = Self.flushLevel
        let preDelay = preDelayStorage
        let preCapacity = preDelayCapacity
        let preLength = preDelayLength
        var prePosition = preDelayPosition
        var mix = mixNow
        for frame in 0..<frameCount {
            let dryLeft = left[frame]
            let dryRight = right[frame]
            // Pre-delay.
            var readSlot = prePosition - preLength
            if readSlot < 0 { readSlot += preCapacity }
            preDelay[2 * prePosition] = dryLeft
            preDelay[2 * prePosition + 1] = dryRight
            var inputs = (preDelay[2 * readSlot], preDelay[2 * readSlot + 1])
            prePosition += 1
            if prePosition == preCapacity { prePosition = 0 }
            // Input diffusion: Schroeder allpasses, per channel.
            for channel in 0..<2 {
                var x = channel == 0 ? inputs.0 : inputs.1
                for stage in 0..<stages {
                    let index = channel * stages + stage
                    let base = diffusers + diffuserOffsets[index]
                    let position = diffuserPositions[index]
                    let delayed = base[position]
                    var v = x + g * delayed
                    if abs(v) < flush { v = 0 }
                    base[position] = v
                    x = delayed - g * v
                    diffuserPositions[index] = position + 1 == diffuserLengths[index] ? 0 : position + 1
                }
                if channel == 0 { inputs.0 = x } else { inputs.1 = x }
            }
            // Read the lines through their damping filters; the outputs take two orthogonal sign patterns.
            var wetLeft: Float = 0
            var wetRight: Float = 0
            for line in 0..<lines {
                let value = storage[offsets[line] + positions[line]]
                var filtered = gains[line] * value + damping[line] * filters[line]
                if abs(filtered) < flush { filtered = 0 }
                filters[line] = filtered
                values[line] = filtered
                wetLeft += line & 1 == 0 ? filtered : -filtered
                wetRight += (line >> 1) & 1 == 0 ? filtered : -filtered
            }
            // Hadamard feedback (orthonormal), the inputs added, written back.
            var span = 1
            while span < lines {
                var start = 0
                while start < lines {
                    for index in start..<(start + span) {
                        let a = values[index]
                        let b = values[index + span]
                        values[index] = a + b
                        values[index + span] = a - b
                    }
                    start += 2 * span
                }
                span <<= 1
            }
            for line in 0..<lines {
                let injected = (line & 1 == 0 ? inputs.0 : inputs.1) * 0.35
                let written = values[line] * 0.25 + injected
                let position = positions[line]
                storage[offsets[line] + position] = abs(written) < flush ? 0 : written
                positions[line] = position + 1 == lengths[line] ? 0 : position + 1
            }
            if mix != mixTarget {
                mix = mixTarget > mix ? min(mixTarget, mix + mixStep) : max(mixTarget, mix - mixStep)
            }
            let wet = Float(mix)
            outLeft[frame] = dryLeft + (wetLeft * 0.25 - dryLeft) * wet
            if stereoOut { outRight[frame] = dryRight + (wetRight * 0.25 - dryRight) * wet }
        }
        preDelayPosition = prePosition
        mixNow = mix
    }
}
