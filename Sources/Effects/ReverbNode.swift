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
/// The plate preset is Jon Dattorro's plate reverberator (1997): input diffusion into a modulated
/// "figure eight" tank, seven output taps per channel.
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
    /// The right channel's diffusers are this much longer: decorrelated inputs.
    static let rightDiffuserScale = 1.113

    private let presetIndex = Atomic<Int>(3)
    private let mixBits = Atomic<UInt64>(50.0.bitPattern)

    // Render state, preallocated in prepare. Every delay is a ring of a power-of-two size indexed
    // by one running sample counter (`counter & mask`), so the loop never wraps positions one by
    // one; the sixteen lines are processed as one SIMD16 vector.
    private var sampleRate = 44_100.0
    private var builtPreset = -1
    private var counter = 0
    /// Line k's ring starts at `lineRings + k * lineStride`: a power-of-two ring plus a pad that
    /// keeps the sixteen read positions out of one another's cache sets.
    private var lineRings: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var lineBits = 0
    private var lineStride = 0
    /// A block of frames by sixteen lines, frame-major, 64-byte aligned: the lines' outputs are
    /// gathered here, and what they take in is scattered from here.
    private let matrix = UnsafeMutableRawPointer.allocate(
        byteCount: ReverbNode.maximumBlock * 64, alignment: 64
    ).bindMemory(to: Float.self, capacity: ReverbNode.maximumBlock * 16)
    /// Frames per block: `maximumBlock`, or fewer if the shortest line is shorter.
    private var blockCapacity = 1
    static let maximumBlock = 128
    private let lineDelays = UnsafeMutablePointer<Int>.allocate(capacity: ReverbNode.lines)
    /// Per-line loop gain and damping pole (loaded as vectors per quantum; set element by element
    /// through pointers, since a SIMD subscript setter is a generic call in unoptimized builds).
    private let lineGains = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)
    private let lineDamping = UnsafeMutablePointer<Float>.allocate(capacity: ReverbNode.lines)
    private var lineFilters = SIMD16<Float>.zero
    /// Diffuser (channel c, stage s)'s ring is number `s * 2 + c`.
    private var diffuserRings: UnsafeMutablePointer<Float> = .allocate(capacity: 1)
    private var diffuserBits = 0
    private let diffuserDelays = UnsafeMutablePointer<Int>.allocate(capacity: 2 * ReverbNode.stages)
    /// Left, then right (each a ring of `1 << preDelayBits`).
    private var preDelayRing: UnsafeMutablePointer<Float> = .allocate(capacity: 2)
    private var preDelayBits = 0
    private var preDelayLength = 1
    private var mixNow = 0.5
    /// The plate preset's own network (allocated in prepare).
    private var plate: DattorroPlate?
    /// Whether the network built is the plate.
    private var builtPlate = false
    /// The pre-delayed, diffused input of a quantum: left at 0, right at `diffusedCapacity`.
    private var diffused: UnsafeMutablePointer<Float> = .allocate(capacity: 2)
    private var diffusedCapacity = 1

    public init(preset: ReverbPreset = .mediumHall, wetDryMix: Double = 50) {
        lineDelays.initialize(repeating: 1, count: Self.lines)
        lineGains.initialize(repeating: 0, count: Self.lines)
        lineDamping.initialize(repeating: 0, count: Self.lines)
        diffuserDelays.initialize(repeating: 1, count: 2 * Self.stages)
        super.init(name: "reverb")
        self.preset = preset
        self.wetDryMix = wetDryMix
    }

    deinit {
        lineRings.deallocate()
        diffuserRings.deallocate()
        preDelayRing.deallocate()
        matrix.deallocate()
        diffused.deallocate()
        plate?.deallocate()
        lineDelays.deallocate()
        lineGains.deallocate()
        lineDamping.deallocate()
        diffuserDelays.deallocate()
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    /// The bits of the smallest power of two above `frames`.
    private static func bits(above frames: Int) -> Int { Int.bitWidth - (frames).leadingZeroBitCount }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        // Room for the largest preset.
        let longest = ReverbPreset.table.map(\.size).max()!
        lineBits = Self.bits(above: Int(Self.baseLengths.max()! / 1_000 * longest * sampleRate) + 2)
        lineStride = (1 << lineBits) + 16 + 3
        lineRings.deallocate()
        lineRings = .allocate(capacity: Self.lines * lineStride)
        diffuserBits = Self.bits(
            above: Int(Self.diffuserLengths.max()! * Self.rightDiffuserScale / 1_000 * sampleRate) + 2)
        diffuserRings.deallocate()
        diffuserRings = .allocate(capacity: 2 * Self.stages << diffuserBits)
        preDelayBits = Self.bits(above: Int(0.05 * sampleRate) + 2)
        preDelayRing.deallocate()
        preDelayRing = .allocate(capacity: 2 << preDelayBits)
        plate?.deallocate()
        plate = DattorroPlate(sampleRate: sampleRate)
        diffusedCapacity = max(1, maximumFrameCount)
        diffused.deallocate()
        diffused = .allocate(capacity: 2 * diffusedCapacity)
        builtPreset = -1
        mixNow = wetDryMix / 100
        build(presetIndex.load(ordering: .relaxed))
    }

    public override func reset() { build(presetIndex.load(ordering: .relaxed)) }

    /// Sets the network up for a preset and clears it (render thread on a preset change: only
    /// preallocated memory is touched).
    private func build(_ index: Int) {
        // (By index: `firstIndex(of:)` is a generic call that allocates in unoptimized builds.)
        let preset = ReverbPreset.table[index]
        builtPreset = index
        let mid = preset.reverberationTime
        let high = mid * preset.highDecayRatio
        let omega = 2 * Double.pi * 1_000 / sampleRate
        for line in 0..<Self.lines {
            // Odd lengths: fewer shared factors.
            let length = Int(Self.baseLengths[line] / 1_000 * preset.size * sampleRate) | 1
            lineDelays[line] = length
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
            lineGains[line] = Float(gainDC * (1 - pole))
            lineDamping[line] = Float(pole)
        }
        var shortest = Int.max
        for line in 0..<Self.lines { shortest = min(shortest, lineDelays[line]) }
        blockCapacity = max(1, min(Self.maximumBlock, shortest))
        lineFilters = .zero
        lineRings.update(repeating: 0, count: Self.lines * lineStride)
        for stage in 0..<Self.stages {
            for channel in 0..<2 {
                let scale = channel == 0 ? 1 : Self.rightDiffuserScale
                diffuserDelays[stage * 2 + channel] = Int(Self.diffuserLengths[stage] * scale / 1_000 * sampleRate) | 1
            }
        }
        diffuserRings.update(repeating: 0, count: 2 * Self.stages << diffuserBits)
        preDelayLength = max(1, min((1 << preDelayBits) - 1, Int(preset.preDelay * sampleRate)))
        preDelayRing.update(repeating: 0, count: 2 << preDelayBits)
        counter = 0
        // (Pattern matches, not `==` and `!= nil`: those are generic calls in unoptimized builds,
        // and generic code may allocate.)
        builtPlate = false
        if case .plate = preset, case .some = plate {
            builtPlate = true
            plate?.configure(reverberationTime: mid, sampleRate: sampleRate)
        }
    }

    /// Sylvester's 16-point Hadamard transform (unnormalized: its gain is 4) as four perfect-shuffle
    /// butterflies.
    @inline(__always)
    private static func hadamard(_ v: SIMD16<Float>) -> SIMD16<Float> {
        var v = v
        for _ in 0..<4 {
            let (even, odd) = (v.evenHalf, v.oddHalf)
            v = SIMD16(lowHalf: even + odd, highHalf: even - odd)
        }
        return v
    }

    /// Values below 2⁻⁵⁰ (−301 dB) in magnitude set to exactly zero, without a branch: so no state
    /// ever becomes subnormal, and a tail ends. Works on the bits: a value whose exponent field is
    /// below the threshold's is masked away (integer vector operations, cheap on every x86-64).
    @inline(__always)
    private static func flushed(_ v: SIMD16<Float>) -> SIMD16<Float> {
        let bits = unsafeBitCast(v, to: SIMD16<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD16<Float>.self)
    }

    @inline(__always)
    private static func flushed(_ v: SIMD2<Float>) -> SIMD2<Float> {
        let bits = unsafeBitCast(v, to: SIMD2<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD2<Float>.self)
    }

    @inline(__always)
    private static func flushed(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let bits = unsafeBitCast(v, to: SIMD8<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD8<Float>.self)
    }

    /// The exponent field of 2⁻⁵⁰.
    private static let flushExponent = Int32((127 - 50) << 23)

    /// A 4 × 4 matrix given by rows, returned by columns.
    @inline(__always)
    private static func transposed(
        _ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>
    ) -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        (
            SIMD4(a[0], b[0], c[0], d[0]), SIMD4(a[1], b[1], c[1], d[1]), SIMD4(a[2], b[2], c[2], d[2]),
            SIMD4(a[3], b[3], c[3], d[3])
        )
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        let index = presetIndex.load(ordering: .relaxed)
        if index != builtPreset { build(index) }
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
        if builtPlate {
            renderPlate(left, right, outLeft, outRight, stereoOut, frameCount, mixTarget, mixStep)
            return
        }
        var offset = 0
        while offset < frameCount {
            // The quantum's input through the pre-delay and the diffusers first, in pieces of at
            // most the scratch's capacity, then the network over the piece in blocks.
            let count = min(diffusedCapacity, frameCount - offset)
            diffuse(left + offset, right + offset, count, from: counter)
            var done = 0
            while done < count {
                let block = min(blockCapacity, count - done)
                let at = offset + done
                runNetwork(
                    block, diffused + done, diffused + diffusedCapacity + done, left + at, right + at, outLeft + at,
                    stereoOut ? outRight + at : nil, mixTarget, mixStep)
                done += block
            }
            offset += count
        }
    }

    /// The delay network over `count` frames (at most `blockCapacity`, so at most the shortest
    /// line's delay: every line's output for the block is already in its ring). Three passes:
    /// each line's output stretch copied into a frame-major matrix; the network's one recursion
    /// (damping, Hadamard feedback, input) frame by frame on whole 16-line vectors; each line's
    /// input stretch copied from the matrix back into its ring.
    @inline(__always)
    private func runNetwork(
        _ count: Int, _ inLeft: UnsafeMutablePointer<Float>, _ inRight: UnsafeMutablePointer<Float>,
        _ dryLeft: UnsafeMutablePointer<Float>, _ dryRight: UnsafeMutablePointer<Float>,
        _ outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>?, _ mixTarget: Double,
        _ mixStep: Double
    ) {
        let lines = lineRings
        let lineMask = (1 << lineBits) - 1
        let lineStride = self.lineStride
        let matrix = self.matrix
        let counter = self.counter
        // Pass 1: line k's outputs for the block are `count` samples from `counter - delay`; four
        // lines by four frames at a time, transposed in registers.
        let ringSize = lineMask &+ 1
        let whole = count & ~3
        for group in stride(from: 0, to: Self.lines, by: 4) {
            let starts = SIMD4(
                (counter &- lineDelays[group]) & lineMask, (counter &- lineDelays[group &+ 1]) & lineMask,
                (counter &- lineDelays[group &+ 2]) & lineMask, (counter &- lineDelays[group &+ 3]) & lineMask)
            var frame = 0
            if (starts &+ count).max() <= ringSize {
                let a = UnsafeRawPointer(lines + (group &* lineStride &+ starts[0]))
                let b = UnsafeRawPointer(lines + ((group &+ 1) &* lineStride &+ starts[1]))
                let c = UnsafeRawPointer(lines + ((group &+ 2) &* lineStride &+ starts[2]))
                let d = UnsafeRawPointer(lines + ((group &+ 3) &* lineStride &+ starts[3]))
                let target = UnsafeMutableRawPointer(matrix + group)
                while frame < whole {
                    let bytes = frame &<< 2
                    let rows = Self.transposed(
                        a.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        b.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        c.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        d.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self))
                    let row = target + frame &<< 6
                    row.storeBytes(of: rows.0, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.1, toByteOffset: 64, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.2, toByteOffset: 128, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.3, toByteOffset: 192, as: SIMD4<Float>.self)
                    frame &+= 4
                }
            }
            // The rest (and a stretch that wraps around its ring) one by one.
            for line in group..<group &+ 4 {
                let ring = lines + line &* lineStride
                let column = matrix + line
                let start = starts[line &- group]
                for rest in frame..<count { column[rest &<< 4] = ring[(start &+ rest) & lineMask] }
            }
        }
        // Pass 2: the recursion. Row `frame` of the matrix is read, then overwritten with what
        // the lines take in; the wet outputs replace the input in `inLeft` and `inRight`. The rings
        // hold four times the signal (the Hadamard transform's gain, not normalized away: the
        // 1/4 is in the loop gains, exactly, being a power of two).
        let gains = UnsafeRawPointer(lineGains).loadUnaligned(as: SIMD16<Float>.self) * 0.25
        let damping = UnsafeRawPointer(lineDamping).loadUnaligned(as: SIMD16<Float>.self)
        var filters = lineFilters
        let rows = UnsafeMutableRawPointer(matrix)
        for frame in 0..<count {
            let row = rows + frame &<< 6
            let outputs = row.load(as: SIMD16<Float>.self)
            filters = Self.flushed(gains * outputs + damping * filters)
            // Hadamard feedback (orthonormal with the 1/4). Its rows 1 and 2 are two orthogonal
            // sign patterns over the lines: the decorrelated left and right outputs. The input
            // enters every line, the left channel with one sign, the right with alternating signs
            // (the Hadamard image of lines 0 and 1).
            let mixed = Self.hadamard(filters)
            let (x, y) = (inLeft[frame], inRight[frame])
            let pair = SIMD4(x + y, x - y, x + y, x - y)
            let quad = SIMD8(lowHalf: pair, highHalf: pair)
            // (Not flushed, and never subnormal: the filters are 0 or above 2⁻⁵⁰ in magnitude, and so
            // are the diffusers' states, so every sum here is 0 or a multiple of 2⁻⁷⁶. Once the
            // filters have decayed to zero and the input is silent, the lines take in zeros.)
            row.storeBytes(of: mixed + SIMD16(lowHalf: quad, highHalf: quad), as: SIMD16<Float>.self)
            inLeft[frame] = mixed[1] * 0.25
            inRight[frame] = mixed[2] * 0.25
        }
        lineFilters = filters
        // Dry and wet mixed: a vector loop once the mix has settled.
        var mix = mixNow
        var frame = 0
        while frame < count && mix != mixTarget {
            mix = mixTarget > mix ? min(mixTarget, mix + mixStep) : max(mixTarget, mix - mixStep)
            let wet = Float(mix)
            outLeft[frame] = dryLeft[frame] + (inLeft[frame] - dryLeft[frame]) * wet
            if let outRight { outRight[frame] = dryRight[frame] + (inRight[frame] - dryRight[frame]) * wet }
            frame &+= 1
        }
        mixNow = mix
        let wet = Float(mix)
        for rest in frame..<count { outLeft[rest] = dryLeft[rest] + (inLeft[rest] - dryLeft[rest]) * wet }
        if let outRight {
            for rest in frame..<count { outRight[rest] = dryRight[rest] + (inRight[rest] - dryRight[rest]) * wet }
        }
        // Pass 3: line k takes in column k at `counter` (transposed back, four by four).
        let write = counter & lineMask
        frame = 0
        if write &+ count <= ringSize {
            let source = UnsafeRawPointer(matrix)
            while frame < whole {
                let row = source + frame &<< 6
                for group in stride(from: 0, to: Self.lines, by: 4) {
                    let columns = Self.transposed(
                        row.load(fromByteOffset: group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 64 &+ group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 128 &+ group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 192 &+ group &<< 2, as: SIMD4<Float>.self))
                    let target = lines + (group &* lineStride &+ write &+ frame)
                    UnsafeMutableRawPointer(target).storeBytes(of: columns.0, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(target + lineStride).storeBytes(of: columns.1, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(target + 2 &* lineStride).storeBytes(of: columns.2, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(target + 3 &* lineStride).storeBytes(of: columns.3, as: SIMD4<Float>.self)
                }
                frame &+= 4
            }
        }
        for line in 0..<Self.lines {
            let ring = lines + line &* lineStride
            let column = matrix + line
            for rest in frame..<count { ring[(write &+ rest) & lineMask] = column[rest &<< 4] }
        }
        self.counter = counter &+ count
    }

    /// The pre-delay and the input diffusers (Schroeder allpasses, four per channel) over `count`
    /// frames from sample `start`, into `diffused`. The input runs through them in pieces shorter
    /// than every diffuser's delay, so a piece has no recursion: each channel's four stages run
    /// together over it, eight frames at a time, on contiguous stretches of their rings.
    private func diffuse(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int, from start: Int
    ) {
        let outLeft = diffused
        let outRight = diffused + diffusedCapacity
        // The pre-delay, as copies: in runs of at most its length, each read out of the ring
        // before it is written in (the ring is longer than the delay, so nothing still to be read
        // is overwritten).
        let preSize = 1 << preDelayBits
        var done = 0
        while done < count {
            let run = min(count - done, preDelayLength)
            let now = start &+ done
            Self.copy(from: preDelayRing, preSize, at: (now &- preDelayLength) & (preSize - 1), to: outLeft + done, run)
            Self.copy(
                from: preDelayRing + preSize, preSize, at: (now &- preDelayLength) & (preSize - 1), to: outRight + done,
                run)
            Self.copy(left + done, run, into: preDelayRing, preSize, at: now & (preSize - 1))
            Self.copy(right + done, run, into: preDelayRing + preSize, preSize, at: now & (preSize - 1))
            done += run
        }
        let size = 1 << diffuserBits
        let mask = size - 1
        var shortest = Int.max
        for index in 0..<2 * Self.stages { shortest = min(shortest, diffuserDelays[index]) }
        let g = Float(Self.diffuserGain)
        let gain = SIMD8<Float>(repeating: g)
        var offset = 0
        while offset < count {
            // A piece: no longer than the shortest delay (so it has no recursion), and cut where
            // any ring's read or write stretch would wrap around (so every stretch is contiguous).
            let now = start &+ offset
            let writeStart = now & mask
            var length = min(shortest, count - offset, size - writeStart)
            for index in 0..<2 * Self.stages {
                length = min(length, size - ((now &- diffuserDelays[index]) & mask))
            }
            for channel in 0..<2 {
                // The four stages of a channel together, eight frames at a time in registers.
                let x = (channel == 0 ? outLeft : outRight) + offset
                let ring0 = diffuserRings + (channel << diffuserBits)
                let ring1 = diffuserRings + ((2 &+ channel) << diffuserBits)
                let ring2 = diffuserRings + ((4 &+ channel) << diffuserBits)
                let ring3 = diffuserRings + ((6 &+ channel) << diffuserBits)
                let read0 = UnsafeRawPointer(ring0 + ((now &- diffuserDelays[channel]) & mask))
                let read1 = UnsafeRawPointer(ring1 + ((now &- diffuserDelays[2 &+ channel]) & mask))
                let read2 = UnsafeRawPointer(ring2 + ((now &- diffuserDelays[4 &+ channel]) & mask))
                let read3 = UnsafeRawPointer(ring3 + ((now &- diffuserDelays[6 &+ channel]) & mask))
                let write0 = UnsafeMutableRawPointer(ring0 + writeStart)
                let write1 = UnsafeMutableRawPointer(ring1 + writeStart)
                let write2 = UnsafeMutableRawPointer(ring2 + writeStart)
                let write3 = UnsafeMutableRawPointer(ring3 + writeStart)
                let signal = UnsafeMutableRawPointer(x)
                var frame = 0
                @inline(__always) func stage(
                    _ v: SIMD8<Float>, _ read: UnsafeRawPointer, _ write: UnsafeMutableRawPointer, _ bytes: Int
                ) -> SIMD8<Float> {
                    let delayed = read.loadUnaligned(fromByteOffset: bytes, as: SIMD8<Float>.self)
                    let fed = Self.flushed(v + gain * delayed)
                    write.storeBytes(of: fed, toByteOffset: bytes, as: SIMD8<Float>.self)
                    return delayed - gain * fed
                }
                while frame + 8 <= length {
                    let bytes = frame &<< 2
                    var v = signal.loadUnaligned(fromByteOffset: bytes, as: SIMD8<Float>.self)
                    v = stage(v, read0, write0, bytes)
                    v = stage(v, read1, write1, bytes)
                    v = stage(v, read2, write2, bytes)
                    v = stage(v, read3, write3, bytes)
                    signal.storeBytes(of: v, toByteOffset: bytes, as: SIMD8<Float>.self)
                    frame &+= 8
                }
                @inline(__always) func stage(
                    _ v: Float, _ read: UnsafeRawPointer, _ write: UnsafeMutableRawPointer, _ bytes: Int
                ) -> Float {
                    let delayed = read.load(fromByteOffset: bytes, as: Float.self)
                    let fed = Self.flushed(SIMD2(repeating: v + g * delayed)).x
                    write.storeBytes(of: fed, toByteOffset: bytes, as: Float.self)
                    return delayed - g * fed
                }
                while frame < length {
                    let bytes = frame &<< 2
                    var v = x[frame]
                    v = stage(v, read0, write0, bytes)
                    v = stage(v, read1, write1, bytes)
                    v = stage(v, read2, write2, bytes)
                    v = stage(v, read3, write3, bytes)
                    x[frame] = v
                    frame &+= 1
                }
            }
            offset += length
        }
    }

    /// `count` samples out of a ring of `size` from `position` on (wrapping around once at most).
    @inline(__always)
    private static func copy(
        from ring: UnsafeMutablePointer<Float>, _ size: Int, at position: Int, to target: UnsafeMutablePointer<Float>,
        _ count: Int
    ) {
        let first = min(count, size - position)
        target.update(from: ring + position, count: first)
        if first < count { (target + first).update(from: ring, count: count - first) }
    }

    /// `count` samples into a ring of `size` from `position` on (wrapping around once at most).
    @inline(__always)
    private static func copy(
        _ source: UnsafeMutablePointer<Float>, _ count: Int, into ring: UnsafeMutablePointer<Float>, _ size: Int,
        at position: Int
    ) {
        let first = min(count, size - position)
        (ring + position).update(from: source, count: first)
        if first < count { ring.update(from: source + first, count: count - first) }
    }

    /// The plate preset: pre-delay, then Dattorro's plate.
    private func renderPlate(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
        _ outLeft: UnsafeMutablePointer<Float>,
        _ outRight: UnsafeMutablePointer<Float>, _ stereoOut: Bool, _ frameCount: Int, _ mixTarget: Double,
        _ mixStep: Double
    ) {
        guard var plate else { return }
        let preDelay = preDelayRing
        let preMask = (1 << preDelayBits) - 1
        var counter = self.counter
        var mix = mixNow
        for frame in 0..<frameCount {
            let dryLeft = left[frame]
            let dryRight = right[frame]
            let write = counter & preMask
            let read = (counter &- preDelayLength) & preMask
            preDelay[write] = dryLeft
            preDelay[preMask &+ 1 &+ write] = dryRight
            let (wetLeft, wetRight) = plate.process(preDelay[read], preDelay[preMask &+ 1 &+ read])
            counter &+= 1
            if mix != mixTarget {
                mix = mixTarget > mix ? min(mixTarget, mix + mixStep) : max(mixTarget, mix - mixStep)
            }
            let wet = Float(mix)
            outLeft[frame] = dryLeft + (wetLeft - dryLeft) * wet
            if stereoOut { outRight[frame] = dryRight + (wetRight - dryRight) * wet }
        }
        self.plate = plate
        self.counter = counter
        mixNow = mix
    }
}
