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

    /// Renders `count` samples of the first `slots` voices, adding into the four buses from `offset`.
    ///
    /// Per voice and sample: a 4-point Catmull-Rom read (FluidSynth's, with an 8-bit fraction),
    /// the amplitude ramp, the two-pole low-pass (direct form II, coefficients ramping), and the
    /// four bus gains.
    mutating func render(
        slots: Int, count: Int, arena: UnsafePointer<Int16>, offset: Int, dryLeft: UnsafeMutablePointer<Float>,
        dryRight: UnsafeMutablePointer<Float>, reverbBus: UnsafeMutablePointer<Float>,
        chorusBus: UnsafeMutablePointer<Float>
    ) {
        let groups = (slots + Self.width - 1) / Self.width
        let scale = Floats(repeating: 1.0 / 32768)
        for group in 0..<groups {
            var position = self.position[group]
            var fraction = self.fraction[group]
            let stepWhole = self.stepWhole[group]
            let stepFraction = self.stepFraction[group]
            let start = self.start[group]
            let last = self.last[group]
            let loopStart = self.loopStart[group]
            let loopEnd = self.loopEnd[group]
            let loopLength = loopEnd &- loopStart
            let looping = self.looping[group] .!= 0
            var wrapped = self.wrapped[group] .!= 0
            var playing = self.playing[group] .!= 0
            var gain = self.gain[group]
            let gainStep = self.gainStep[group]
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
            for index in 0..<count {
                // The four points around the position, with FluidSynth's boundary rules.
                var before = position &- 1
                before.replace(with: start, where: .!wrapped .& (before .< start))
                before.replace(with: before &+ loopLength, where: wrapped .& (before .< loopStart))
                var after = position &+ 1
                var after2 = position &+ 2
                after.replace(with: after &- loopLength, where: looping .& (after .>= loopEnd))
                after2.replace(with: after2 &- loopLength, where: looping .& (after2 .>= loopEnd))
                after.replace(with: last, where: .!looping .& (after .> last))
                after2.replace(with: last, where: .!looping .& (after2 .> last))
                var current = position
                current.replace(with: last, where: current .> last)
                var s0 = Floats.zero
                var s1 = Floats.zero
                var s2 = Floats.zero
                var s3 = Floats.zero
                for lane in 0..<Self.width {
                    s0[lane] = Float(arena[Int(before[lane])])
                    s1[lane] = Float(arena[Int(current[lane])])
                    s2[lane] = Float(arena[Int(after[lane])])
                    s3[lane] = Float(arena[Int(after2[lane])])
                }
                let row = SIMD8<Int32>(truncatingIfNeeded: fraction &>> 24)
                let x = Floats(row) * Floats(repeating: 1.0 / 256)
                let x2: Floats = x * x
                let x3: Floats = x2 * x
                let half: Floats = 0.5 * x
                let c0: Floats = x2 - half - 0.5 * x3
                let c1: Floats = 1 - 2.5 * x2 + 1.5 * x3
                let c2: Floats = half + 2 * x2 - 1.5 * x3
                let c3: Floats = 0.5 * (x3 - x2)
                var interpolated: Floats = c0 * s0
                interpolated += c1 * s1
                interpolated += c2 * s2
                interpolated += c3 * s3
                var sample: Floats = interpolated * scale * gain
                sample.replace(with: 0, where: .!playing)
                // Low-pass, direct form II.
                let feedback: Floats = a1 * z1 + a2 * z2
                let w: Floats = sample - feedback
                let out: Floats = b0 * (w + z2) + b1 * z1
                z2 = z1
                z1 = w
                dryLeft[offset + index] += (out * left).sum()
                dryRight[offset + index] += (out * right).sum()
                reverbBus[offset + index] += (out * reverb).sum()
                chorusBus[offset + index] += (out * chorus).sum()
                gain += gainStep
                b0 += b0Step
                b1 += b1Step
                a1 += a1Step
                a2 += a2Step
                // Advance; wrap in the loop; stop past the end of an unlooped sample.
                let advanced = fraction &+ stepFraction
                position = position &+ stepWhole &+ Ints.zero.replacing(with: 1, where: advanced .< fraction)
                fraction = advanced
                let wraps = looping .& (position .>= loopEnd)
                position.replace(with: position &- loopLength, where: wraps)
                wrapped = wrapped .| wraps
                if any(looping .& (position .>= loopEnd)) {
                    for lane in 0..<Self.width where looping[lane] && position[lane] >= loopEnd[lane] {
                        position[lane] = loopStart[lane] + (position[lane] - loopStart[lane]) % max(loopLength[lane], 1)
                    }
                }
                playing = playing .& (looping .| (position .<= last))
            }
            self.position[group] = position
            self.fraction[group] = fraction
            self.wrapped[group] = Ints.zero.replacing(with: -1, where: wrapped)
            self.playing[group] = Ints.zero.replacing(with: -1, where: playing)
            self.gain[group] = gain
            self.b0[group] = b0
            self.b1[group] = b1
            self.a1[group] = a1
            self.a2[group] = a2
            self.z1[group] = z1
            self.z2[group] = z2
        }
    }
}
