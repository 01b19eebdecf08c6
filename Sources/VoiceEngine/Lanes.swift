/// The per-sample state of the playing voices, laid out for SIMD: lane `l` of group `g` is voice
/// slot `8g + l`. The kernel runs a group's eight voices together, sample by sample, with no
/// branch on any one voice: loop wraps, sample ends and silent lanes are masks.
struct Lanes {
    typealias Floats = SIMD8<Float>
    typealias Ints = SIMD8<Int32>
    typealias Words = SIMD8<UInt32>
    static let width = 8

    var groupCount = 0
    // Playback position (absolute index into the sample arena) and its 32-bit fraction.
    var position: [Ints] = []
    var fraction: [Words] = []
    var stepWhole: [Ints] = []
    var stepFraction: [Words] = []
    // The first point, the last point, the loop (absolute), and masks: looping (-1) or not (0),
    // wrapped at least once, playing.
    var start: [Ints] = []
    var last: [Ints] = []
    var loopStart: [Ints] = []
    var loopEnd: [Ints] = []
    var looping: [Ints] = []
    var wrapped: [Ints] = []
    var playing: [Ints] = []
    // The amplitude, ramping per sample.
    var gain: [Floats] = []
    var gainStep: [Floats] = []
    // The low-pass filter's coefficients (ramping) and state.
    var b0: [Floats] = []
    var b1: [Floats] = []
    var a1: [Floats] = []
    var a2: [Floats] = []
    var b0Step: [Floats] = []
    var b1Step: [Floats] = []
    var a1Step: [Floats] = []
    var a2Step: [Floats] = []
    var z1: [Floats] = []
    var z2: [Floats] = []
    // Bus gains: dry left, dry right, reverb, chorus.
    var left: [Floats] = []
    var right: [Floats] = []
    var reverb: [Floats] = []
    var chorus: [Floats] = []
    /// What the render sums into, lane by lane: four buses of up to ``Envelope/block`` vectors.
    let mix = MixBuffer(count: 4 * Envelope.block)

    init(capacity: Int) {
        groupCount = (capacity + Self.width - 1) / Self.width
        let zeros = [Floats](repeating: .zero, count: groupCount)
        let intZeros = [Ints](repeating: .zero, count: groupCount)
        position = intZeros
        fraction = [Words](repeating: .zero, count: groupCount)
        stepWhole = intZeros
        stepFraction = fraction
        start = intZeros
        last = intZeros
        loopStart = intZeros
        loopEnd = intZeros
        looping = intZeros
        wrapped = intZeros
        playing = intZeros
        gain = zeros
        gainStep = zeros
        b0 = zeros
        b1 = zeros
        a1 = zeros
        a2 = zeros
        b0Step = zeros
        b1Step = zeros
        a1Step = zeros
        a2Step = zeros
        z1 = zeros
        z2 = zeros
        left = zeros
        right = zeros
        reverb = zeros
        chorus = zeros
    }

    /// Silences slot `slot` for good: not playing, every gain, coefficient, ramp and filter state 0.
    /// A slot without a voice still runs through the SIMD passes: a filter left ramping there
    /// would diverge, and 0 times infinity is NaN in the bus sums.
    mutating func clear(_ slot: Int) {
        let (group, lane) = (slot / 8, slot % 8)
        func zero<T: Numeric>(_ array: inout [SIMD8<T>]) { array[group][lane] = 0 }
        zero(&playing)
        zero(&gain)
        zero(&gainStep)
        zero(&b0)
        zero(&b1)
        zero(&a1)
        zero(&a2)
        zero(&b0Step)
        zero(&b1Step)
        zero(&a1Step)
        zero(&a2Step)
        zero(&z1)
        zero(&z2)
        zero(&left)
        zero(&right)
        zero(&reverb)
        zero(&chorus)
    }

    /// Copies slot `from`'s state into slot `to` (to keep the playing voices packed).
    mutating func move(_ from: Int, to: Int) {
        let (fg, fl, tg, tl) = (from / 8, from % 8, to / 8, to % 8)
        func copy<T>(_ array: inout [SIMD8<T>]) { array[tg][tl] = array[fg][fl] }
        copy(&position)
        copy(&fraction)
        copy(&stepWhole)
        copy(&stepFraction)
        copy(&start)
        copy(&last)
        copy(&loopStart)
        copy(&loopEnd)
        copy(&looping)
        copy(&wrapped)
        copy(&playing)
        copy(&gain)
        copy(&gainStep)
        copy(&b0)
        copy(&b1)
        copy(&a1)
        copy(&a2)
        copy(&b0Step)
        copy(&b1Step)
        copy(&a1Step)
        copy(&a2Step)
        copy(&z1)
        copy(&z2)
        copy(&left)
        copy(&right)
        copy(&reverb)
        copy(&chorus)
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
    mutating func render(
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
        let mix = self.mix.vectors
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
    private mutating func readVoice(
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
                let end = index &+ run
                var phase = UInt64(fraction)
                var point = arena + whole
                while index < end {
                    let row = Int(UInt32(truncatingIfNeeded: phase) >> 24) &* 4
                    let value =
                        table[row] * Float(point[-1]) + table[row &+ 1] * Float(point[0]) + table[row &+ 2]
                        * Float(point[1]) + table[row &+ 3] * Float(point[2])
                    output[index &* Self.width] = value * gain
                    gain += gainStep
                    phase &+= step
                    point += Int(phase >> 32)
                    phase &= 0xFFFF_FFFF
                    index &+= 1
                }
                whole = point - arena
                fraction = UInt32(truncatingIfNeeded: phase)
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
    private mutating func filterAndMix(
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

/// Vectors the render pass sums into, allocated once with the lanes.
final class MixBuffer {
    let vectors: UnsafeMutablePointer<SIMD8<Float>>
    let count: Int

    init(count: Int) {
        self.count = count
        vectors = .allocate(capacity: count)
        vectors.initialize(repeating: .zero, count: count)
    }

    deinit { vectors.deallocate() }
}
