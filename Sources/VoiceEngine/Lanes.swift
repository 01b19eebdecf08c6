import CVoiceKernel

/// The per-sample state of the playing voices, laid out for SIMD: lane `l` of group `g` is voice
/// slot `8g + l`. Pass 1 reads each voice's sample on its own, in runs with no test per sample;
/// pass 2 filters and mixes a group's eight voices together, in SIMD lanes.
///
/// The state lives in memory the lanes allocate once (``LaneStorage``), so that the render
/// changes it with no copy-on-write check.
struct Lanes {
    typealias Floats = SIMD8<Float>
    typealias Ints = SIMD8<Int32>
    typealias Words = SIMD8<UInt32>
    static let width = 8

    let groupCount: Int
    let storage: LaneStorage
    // Playback position (absolute index into the sample arena) and its 32-bit fraction.
    let position: LaneArray<Int32>
    let fraction: LaneArray<UInt32>
    let stepWhole: LaneArray<Int32>
    let stepFraction: LaneArray<UInt32>
    // The first point, the last point, the loop (absolute), and masks: looping (-1) or not (0),
    // wrapped at least once, playing.
    let start: LaneArray<Int32>
    let last: LaneArray<Int32>
    let loopStart: LaneArray<Int32>
    let loopEnd: LaneArray<Int32>
    let looping: LaneArray<Int32>
    let wrapped: LaneArray<Int32>
    let playing: LaneArray<Int32>
    // The amplitude, ramping per sample.
    let gain: LaneArray<Float>
    let gainStep: LaneArray<Float>
    // The low-pass filter's coefficients (ramping) and state.
    let b0: LaneArray<Float>
    let b1: LaneArray<Float>
    let a1: LaneArray<Float>
    let a2: LaneArray<Float>
    let b0Step: LaneArray<Float>
    let b1Step: LaneArray<Float>
    let a1Step: LaneArray<Float>
    let a2Step: LaneArray<Float>
    let z1: LaneArray<Float>
    let z2: LaneArray<Float>
    // Bus gains: dry left, dry right, reverb, chorus.
    let left: LaneArray<Float>
    let right: LaneArray<Float>
    let reverb: LaneArray<Float>
    let chorus: LaneArray<Float>
    /// What pass 2 sums into, lane by lane: four buses of up to ``Envelope/block`` vectors.
    let mix: UnsafeMutablePointer<Floats>

    init(capacity: Int) {
        let groups = (capacity + Self.width - 1) / Self.width
        groupCount = groups
        let storage = LaneStorage(vectors: 27 * groups + 4 * Envelope.block)
        self.storage = storage
        let memory = storage.memory
        var next = 0
        func array<T>() -> LaneArray<T> {
            defer { next += groups }
            return LaneArray(base: memory + 32 * next, count: groups)
        }
        position = array()
        fraction = array()
        stepWhole = array()
        stepFraction = array()
        start = array()
        last = array()
        loopStart = array()
        loopEnd = array()
        looping = array()
        wrapped = array()
        playing = array()
        gain = array()
        gainStep = array()
        b0 = array()
        b1 = array()
        a1 = array()
        a2 = array()
        b0Step = array()
        b1Step = array()
        a1Step = array()
        a2Step = array()
        z1 = array()
        z2 = array()
        left = array()
        right = array()
        reverb = array()
        chorus = array()
        mix = (memory + 32 * next).bindMemory(to: Floats.self, capacity: 4 * Envelope.block)
    }

    /// Silences slot `slot` for good: not playing, every gain, coefficient, ramp and filter state 0.
    /// A slot without a voice still runs through the SIMD passes: a filter left ramping there
    /// would diverge, and 0 times infinity is NaN in the bus sums.
    func clear(_ slot: Int) {
        let (group, lane) = (slot / 8, slot % 8)
        func zero<T: Numeric>(_ array: LaneArray<T>) { array[group][lane] = 0 }
        zero(playing)
        zero(gain)
        zero(gainStep)
        zero(b0)
        zero(b1)
        zero(a1)
        zero(a2)
        zero(b0Step)
        zero(b1Step)
        zero(a1Step)
        zero(a2Step)
        zero(z1)
        zero(z2)
        zero(left)
        zero(right)
        zero(reverb)
        zero(chorus)
    }

    /// Copies slot `from`'s state into slot `to` (to keep the playing voices packed).
    func move(_ from: Int, to: Int) {
        let (fg, fl, tg, tl) = (from / 8, from % 8, to / 8, to % 8)
        func copy<T>(_ array: LaneArray<T>) { array[tg][tl] = array[fg][fl] }
        copy(position)
        copy(fraction)
        copy(stepWhole)
        copy(stepFraction)
        copy(start)
        copy(last)
        copy(loopStart)
        copy(loopEnd)
        copy(looping)
        copy(wrapped)
        copy(playing)
        copy(gain)
        copy(gainStep)
        copy(b0)
        copy(b1)
        copy(a1)
        copy(a2)
        copy(b0Step)
        copy(b1Step)
        copy(a1Step)
        copy(a2Step)
        copy(z1)
        copy(z2)
        copy(left)
        copy(right)
        copy(reverb)
        copy(chorus)
    }

    /// Catmull-Rom coefficients for the 256 rows of FluidSynth's 8-bit fraction (Olli
    /// Niemitalo's formulas), four per row.
    static let interpolation: [Float] = (0..<256).flatMap { (row: Int) -> [Float] in
        let x = Float(row) / 256
        let (x2, x3) = (x * x, x * x * x)
        let c0: Float = x2 - 0.5 * x - 0.5 * x3
        let c1: Float = 1 - 2.5 * x2 + 1.5 * x3
        let c2: Float = 0.5 * x + 2 * x2 - 1.5 * x3
        let c3: Float = 0.5 * (x3 - x2)
        return [c0, c1, c2, c3]
    }
    /// Renders `count` (≤ ``Envelope/block``) samples of the first `slots` voices, adding into
    /// the four buses from `offset`, in two passes:
    ///
    /// 1. per voice, the 4-point Catmull-Rom read (FluidSynth's, with an 8-bit fraction) times the
    ///    amplitude ramp, into `scratch` (eight voices interleaved per group): in runs that stay
    ///    away from the sample's edges, each counted before it starts, with no test per sample;
    /// 2. per group of eight voices, the two-pole low-pass (direct form II, coefficients ramping)
    ///    in SIMD lanes, times the four bus gains, summed lane by lane into ``mix``; the lanes are
    ///    summed into the buses once, after the last group.
    func render(
        slots: Int, count: Int, arena: UnsafePointer<Int16>, offset: Int, scratch: UnsafeMutablePointer<Float>,
        dryLeft: UnsafeMutablePointer<Float>, dryRight: UnsafeMutablePointer<Float>,
        reverbBus: UnsafeMutablePointer<Float>, chorusBus: UnsafeMutablePointer<Float>
    ) {
        let groups = (slots + Self.width - 1) / Self.width
        guard groups > 0 else { return }
        Self.interpolation.withUnsafeBufferPointer { table in
            for slot in 0..<(groups * Self.width) {
                readVoice(
                    slot, count: count, arena: arena, table: table.baseAddress!,
                    into: scratch + (slot / Self.width) * count * Self.width + slot % Self.width)
            }
        }
        mix.update(repeating: .zero, count: 4 * count)
        var sends = false
        for group in 0..<groups {
            sends = filterAndMix(group, count: count, block: scratch + group * count * Self.width, mix: mix) || sends
        }
        for index in 0..<count {
            dryLeft[offset &+ index] += mix[index].sum()
            dryRight[offset &+ index] += mix[count &+ index].sum()
        }
        if sends {
            for index in 0..<count {
                reverbBus[offset &+ index] += mix[2 &* count &+ index].sum()
                chorusBus[offset &+ index] += mix[3 &* count &+ index].sum()
            }
        }
    }

    /// Pass 1 for one voice: `count` samples, every eighth float of `output`.
    private func readVoice(
        _ slot: Int, count: Int, arena: UnsafePointer<Int16>, table: UnsafePointer<Float>,
        into output: UnsafeMutablePointer<Float>
    ) {
        let (group, lane) = (slot / Self.width, slot % Self.width)
        guard playing[group][lane] != 0 else {
            for index in 0..<count { output[index &* Self.width] = 0 }
            return
        }
        var whole = Int(position[group][lane])
        var fraction = fraction[group][lane]
        let stepWhole = Int(self.stepWhole[group][lane])
        let stepFraction = self.stepFraction[group][lane]
        let step = UInt64(stepWhole) << 32 | UInt64(stepFraction)
        let start = Int(self.start[group][lane])
        let last = Int(self.last[group][lane])
        let loopStart = Int(self.loopStart[group][lane])
        let loopEnd = Int(self.loopEnd[group][lane])
        let loopLength = loopEnd - loopStart
        let looping = self.looping[group][lane] != 0
        var wrapped = self.wrapped[group][lane] != 0
        var gain = self.gain[group][lane] * (1.0 / 32768)
        let gainStep = self.gainStep[group][lane] * (1.0 / 32768)
        // Where all four points are the sample's own, with no rule to apply.
        let highest = looping ? loopEnd - 3 : last - 2
        var lowest = wrapped ? loopStart + 1 : start + 1
        var index = 0
        while index < count {
            if whole >= lowest && whole <= highest {
                // A run that stays at or below `highest`: the samples before the position passes
                // `highest + 1` (in 32.32 fixed point), all of them when the step is 0.
                let room = UInt64(highest &- whole &+ 1) << 32 &- UInt64(fraction)
                let run = step == 0 ? count &- index : min(count &- index, Int((room &- 1) / step) &+ 1)
                whole += pianola_voice_read(
                    arena + whole, &fraction, step, table, &gain, gainStep, output + index &* Self.width,
                    Self.width, run)
                index &+= run
            } else {
                let row = Int(fraction >> 24) &* 4
                var before = whole - 1
                if !wrapped && before < start { before = start }
                if wrapped && before < loopStart { before += loopLength }
                var after = whole + 1
                var after2 = whole + 2
                if looping {
                    if after >= loopEnd { after -= loopLength }
                    if after2 >= loopEnd { after2 -= loopLength }
                } else {
                    after = min(after, last)
                    after2 = min(after2, last)
                }
                let value =
                    table[row] * Float(arena[before]) + table[row &+ 1] * Float(arena[min(whole, last)])
                    + table[row &+ 2] * Float(arena[after]) + table[row &+ 3] * Float(arena[after2])
                output[index &* Self.width] = value * gain
                gain += gainStep
                let (advanced, carry) = fraction.addingReportingOverflow(stepFraction)
                fraction = advanced
                whole += stepWhole + (carry ? 1 : 0)
                index += 1
            }
            if looping {
                if whole >= loopEnd {
                    whole = loopStart + (whole - loopStart) % max(loopLength, 1)
                    if !wrapped {
                        wrapped = true
                        lowest = loopStart + 1
                    }
                }
            } else if whole > last {
                // The sample ended: the voice is silent from here, and stops.
                while index < count {
                    output[index &* Self.width] = 0
                    index += 1
                }
                playing[group][lane] = 0
            }
        }
        position[group][lane] = Int32(whole)
        self.fraction[group][lane] = fraction
        self.wrapped[group][lane] = wrapped ? -1 : 0
        self.gain[group][lane] = gain * 32768
    }

    /// Pass 2 for one group: the low-pass over eight voices at once, times the bus gains, added
    /// into `mix`; true when a lane sends to reverb or chorus.
    private func filterAndMix(
        _ group: Int, count: Int, block: UnsafeMutablePointer<Float>, mix: UnsafeMutablePointer<Floats>
    ) -> Bool {
        var b0 = self.b0[group]
        var b1 = self.b1[group]
        var a1 = self.a1[group]
        var a2 = self.a2[group]
        let (b0Step, b1Step, a1Step, a2Step) = (
            self.b0Step[group], self.b1Step[group], self.a1Step[group], self.a2Step[group]
        )
        var z1 = self.z1[group]
        var z2 = self.z2[group]
        let (left, right, reverb, chorus) = (
            self.left[group], self.right[group], self.reverb[group], self.chorus[group]
        )
        let sends = any(reverb .!= 0) || any(chorus .!= 0)
        let lanes = UnsafeRawPointer(block)
        for index in 0..<count {
            let sample = lanes.loadUnaligned(fromByteOffset: index &* 32, as: Floats.self)
            let feedback: Floats = a1 * z1 + a2 * z2
            let w: Floats = sample - feedback
            let out: Floats = b0 * (w + z2) + b1 * z1
            z2 = z1
            z1 = w
            b0 += b0Step
            b1 += b1Step
            a1 += a1Step
            a2 += a2Step
            mix[index] += out * left
            mix[count &+ index] += out * right
            if sends {
                mix[2 &* count &+ index] += out * reverb
                mix[3 &* count &+ index] += out * chorus
            }
        }
        self.b0[group] = b0
        self.b1[group] = b1
        self.a1[group] = a1
        self.a2[group] = a2
        self.z1[group] = z1
        self.z2[group] = z2
        return sends
    }
}

/// One field of every lane: a vector per group, in ``LaneStorage``'s memory.
struct LaneArray<Scalar: SIMDScalar> {
    let base: UnsafeMutablePointer<SIMD8<Scalar>>
    let count: Int

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base.bindMemory(to: SIMD8<Scalar>.self, capacity: count)
        self.count = count
    }

    subscript(group: Int) -> SIMD8<Scalar> {
        get {
            precondition(group >= 0 && group < count)
            return base[group]
        }
        nonmutating set {
            precondition(group >= 0 && group < count)
            base[group] = newValue
        }
    }
}

/// The memory of the lanes: `vectors` zeroed 32-byte vectors, allocated once and freed with the
/// synthesizer.
final class LaneStorage {
    let memory: UnsafeMutableRawPointer

    init(vectors: Int) {
        memory = .allocate(byteCount: 32 * vectors, alignment: 32)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: 32 * vectors)
    }

    deinit { memory.deallocate() }
}
