import CFloatEnvironment
import Foundation
import TestSupport
import Testing

@testable import AudioGraph
@testable import Effects

/// Runs a stereo signal through a node; returns both output channels.
func processStereo(
    _ node: AudioNode, left: [Float], right: [Float], sampleRate: Double, quantum: Int = 512
)
    throws -> ([Float], [Float])
{
    try node.prepare(format: .stereo(sampleRate: sampleRate), maximumFrameCount: quantum)
    let input = AudioBuffer(channelCount: 2, frameCapacity: quantum)
    let output = AudioBuffer(channelCount: 2, frameCapacity: quantum)
    var outLeft: [Float] = []
    var outRight: [Float] = []
    var position = 0
    while position < left.count {
        let count = min(quantum, left.count - position)
        for frame in 0..<count {
            input.channel(0)[frame] = left[position + frame]
            input.channel(1)[frame] = right[position + frame]
        }
        node.process(
            input, into: output, frameCount: count, time: AudioTime(sampleTime: Int64(position), sampleRate: sampleRate)
        )
        outLeft += UnsafeBufferPointer(start: output.channel(0), count: count)
        outRight += UnsafeBufferPointer(start: output.channel(1), count: count)
        position += count
    }
    return (outLeft, outRight)
}

/// 4th-order Butterworth band-pass (two RBJ sections) around `center`, an octave wide.
func octaveBand(_ signal: [Float], center: Double, sampleRate: Double) -> [Double] {
    var data = signal.map(Double.init)
    for _ in 0..<2 {
        let w0 = 2 * Double.pi * center / sampleRate
        let q = 2.0.squareRoot()  // an octave
        let alpha = sin(w0) / (2 * q)
        let a0 = 1 + alpha
        let (b0, b2, a1, a2) = (alpha / a0, -alpha / a0, -2 * cos(w0) / a0, (1 - alpha) / a0)
        var (z1, z2) = (0.0, 0.0)
        for index in data.indices {
            let x = data[index]
            let y = b0 * x + z1
            z1 = -a1 * y + z2
            z2 = b2 * x - a2 * y
            data[index] = y
        }
    }
    return data
}

/// T30 by Schroeder backward integration: twice the time from −5 to −35 dB of the energy decay
/// curve (least-squares line through it).
func t30(_ response: [Double], sampleRate: Double) -> Double {
    var energy = response.map { $0 * $0 }
    for index in stride(from: energy.count - 2, through: 0, by: -1) { energy[index] += energy[index + 1] }
    let total = energy[0]
    var xs: [Double] = []
    var ys: [Double] = []
    for (index, value) in energy.enumerated() {
        let level = 10 * log10(value / total)
        if level <= -5 && level >= -35 {
            xs.append(Double(index) / sampleRate)
            ys.append(level)
        }
    }
    let n = Double(xs.count)
    let mx = xs.reduce(0, +) / n
    let my = ys.reduce(0, +) / n
    let slope = zip(xs, ys).reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) } / xs.reduce(0) { $0 + ($1 - mx) * ($1 - mx) }
    return -60 / slope
}

/// Abel and Huang's normalized echo density in a 20 ms Hann window centred at `time`.
func echoDensity(_ response: [Float], at time: Double, sampleRate: Double) -> Double {
    let half = Int(0.010 * sampleRate)
    let center = Int(time * sampleRate)
    var weights = 0.0
    var power = 0.0
    for offset in -half...half where center + offset >= 0 && center + offset < response.count {
        let w = 0.5 * (1 + cos(Double.pi * Double(offset) / Double(half)))
        weights += w
        power += w * Double(response[center + offset]) * Double(response[center + offset])
    }
    let sigma = (power / weights).squareRoot()
    var outside = 0.0
    for offset in -half...half where center + offset >= 0 && center + offset < response.count {
        let w = 0.5 * (1 + cos(Double.pi * Double(offset) / Double(half)))
        if abs(Double(response[center + offset])) > sigma { outside += w }
    }
    return outside / weights / erfc(1 / 2.0.squareRoot())
}

@Suite("ReverbNode")
struct ReverbNodeTests {
    let rate = 48_000.0

    func impulseResponse(_ preset: ReverbPreset) throws -> ([Float], [Float]) {
        let count = Int((2 * preset.reverberationTime + 1) * rate)
        var impulse = [Float](repeating: 0, count: count)
        impulse[0] = 1
        return try processStereo(
            ReverbNode(preset: preset, wetDryMix: 100), left: impulse, right: impulse, sampleRate: rate)
    }

    @Test(
        "each preset decays in its reverberation time (T30 in the 1 kHz octave, ±10 %)",
        arguments: ReverbPreset.allCases)
    func reverberationTime(preset: ReverbPreset) throws {
        let (left, right) = try impulseResponse(preset)
        for channel in [left, right] {
            let measured = t30(octaveBand(channel, center: 1_000, sampleRate: rate), sampleRate: rate)
            #expect(
                abs(measured / preset.reverberationTime - 1) <= 0.1,
                "\(preset): T30 \(measured) s for \(preset.reverberationTime) s")
        }
    }

    @Test(
        "echo density reaches 0.9 by 100 ms; left and right decorrelated; mono fold-down within 1.5 dB",
        arguments: ReverbPreset.allCases)
    func densityAndStereo(preset: ReverbPreset) throws {
        let (left, right) = try impulseResponse(preset)
        let densest = stride(from: 0.02, through: 0.1, by: 0.01).map { echoDensity(left, at: $0, sampleRate: rate) }
            .max()!
        // (Measured 0.90 for cathedral, the slowest to build; 0.95 to 1 for the others.)
        #expect(densest >= 0.9, "\(preset): echo density \(densest) by 100 ms")
        // Interaural cross-correlation over ±1 ms, from 80 ms on.
        let start = Int(0.08 * rate)
        let l = left[start...].map(Double.init)
        let r = right[start...].map(Double.init)
        let norm = (l.reduce(0) { $0 + $1 * $1 } * r.reduce(0) { $0 + $1 * $1 }).squareRoot()
        var iacc = 0.0
        for lag in -48...48 {
            var sum = 0.0
            for index in max(0, -lag)..<min(l.count, r.count - lag) { sum += l[index] * r[index + lag] }
            iacc = max(iacc, abs(sum) / norm)
        }
        #expect(iacc <= 0.3, "\(preset): IACC \(iacc)")
        let sum = zip(left, right).reduce(0.0) { $0 + Double($1.0 + $1.1) * Double($1.0 + $1.1) }
        let separate =
            left.reduce(0.0) { $0 + Double($1) * Double($1) } + right.reduce(0.0) { $0 + Double($1) * Double($1) }
        let foldDown = 10 * log10(sum / separate)
        #expect(abs(foldDown) <= 1.5, "\(preset): mono fold-down \(foldDown) dB")
    }

    @Test("no subnormal numbers once a loud sound has faded; the tail ends in exact silence")
    func noDenormals() throws {
        // In the mode that keeps subnormals (the test process may start flushing them: see below),
        // so that this sees what the reverb's own flushing does.
        let original = pianola_subnormals_keep()
        defer { pianola_subnormals_restore(original) }
        var generator = SplitMix(seed: 5)
        let noise = (0..<Int(rate)).map { _ in Float(Double.random(in: -1...1, using: &generator)) }
        let silence = [Float](repeating: 0, count: Int(12 * rate))
        let (left, right) = try processStereo(
            ReverbNode(preset: .mediumHall, wetDryMix: 100), left: noise + silence, right: noise + silence,
            sampleRate: rate)
        let subnormals = (left + right).filter { $0.isSubnormal }.count
        #expect(subnormals == 0, "\(subnormals) subnormal samples")
        // Nor anything near them for the nodes after it: the network's outputs are 0 or at least 2⁻⁵⁰.
        let tiny = (left + right).filter { $0 != 0 && abs($0) < 0x1p-60 }.count
        #expect(tiny == 0, "\(tiny) samples below 2⁻⁶⁰")
        #expect(left.suffix(Int(rate)).allSatisfy { $0 == 0 } && right.suffix(Int(rate)).allSatisfy { $0 == 0 })
    }

    @Test("the thread's subnormal mode switches as asked, and the reverb puts it back after rendering")
    func floatingPointModeRestored() throws {
        // The smallest normal number halved is subnormal: kept in the IEEE mode, zero (all bits)
        // under flush-to-zero. (The divisor is known only at run time: nothing is folded.)
        let two = Float(ProcessInfo.processInfo.processorCount > 0 ? 2 : 3)
        func halvedSmallest(_ divisor: Float) -> Float { Float.leastNormalMagnitude / divisor }
        // The test process may start flushing (Debian's libSoundTouch, built with -ffast-math,
        // sets the mode when it loads): this thread keeps subnormals for the test, then goes back.
        let original = pianola_subnormals_keep()
        defer { pianola_subnormals_restore(original) }
        #if arch(x86_64) || arch(arm64)
            #expect(halvedSmallest(two).isSubnormal)
        #endif
        let previous = pianola_subnormals_flush()
        #if arch(x86_64) || arch(arm64)
            #expect(previous & PIANOLA_SUBNORMALS_UNSUPPORTED == 0)
            #expect(halvedSmallest(two).bitPattern == 0, "flush-to-zero is on")
        #endif
        pianola_subnormals_restore(previous)
        #if arch(x86_64) || arch(arm64)
            #expect(halvedSmallest(two).isSubnormal)
        #endif
        var generator = SplitMix(seed: 12)
        let noise = (0..<4_800).map { _ in Float(Double.random(in: -1...1, using: &generator)) }
        let (left, _) = try processStereo(
            ReverbNode(preset: .largeHall, wetDryMix: 100), left: noise, right: noise, sampleRate: rate)
        #expect(left.contains { $0 != 0 })
        #if arch(x86_64) || arch(arm64)
            #expect(halvedSmallest(two).isSubnormal, "the thread's mode after the reverb rendered")
        #endif
    }

    @Test(
        "the output does not depend on the quantum: blocks of the delay network equal frame by frame",
        arguments: [(ReverbPreset.mediumHall, 48_000.0, 2.0), (.smallRoom, 8_000.0, 5.0), (.cathedral, 44_100.0, 2.0)])
    func quantumIndependent(preset: ReverbPreset, rate: Double, seconds: Double) throws {
        // Frame by frame (quantum 1) is the network's plain recursion; longer quanta run it in
        // blocks (transposed in fours, up to 128 frames, fewer where the shortest line is shorter:
        // 8 kHz small room). Two seconds wrap every ring several times; the small room's five
        // take its tail down through the network's flushing (−301 dB) to exact zeros.
        var generator = SplitMix(seed: 11)
        let count = Int(seconds * rate)
        let left = (0..<count).map { $0 < count / 3 ? Float(Double.random(in: -1...1, using: &generator)) : 0 }
        let right = (0..<count).map { $0 < count / 4 ? Float(Double.random(in: -1...1, using: &generator)) : 0 }
        let reference = try processStereo(
            ReverbNode(preset: preset, wetDryMix: 70), left: left, right: right, sampleRate: rate, quantum: 1)
        #expect(reference.0.contains { $0 != 0 } && reference.1.contains { $0 != 0 })
        if preset == .smallRoom {
            #expect(reference.0.suffix(Int(rate / 2)).allSatisfy { $0 == 0 }, "the tail has ended")
        }
        for quantum in [3, 61, 128, 512, 4_096] {
            let blocks = try processStereo(
                ReverbNode(preset: preset, wetDryMix: 70), left: left, right: right, sampleRate: rate,
                quantum: quantum)
            #expect(blocks.0 == reference.0 && blocks.1 == reference.1, "\(preset) at \(rate) Hz, quantum \(quantum)")
        }
    }

    @Test("wetDryMix 0 passes the input bit for bit")
    func dry() throws {
        var generator = SplitMix(seed: 6)
        let signal = (0..<20_000).map { _ in Float(Double.random(in: -0.5...0.5, using: &generator)) }
        let (left, right) = try processStereo(
            ReverbNode(preset: .largeHall, wetDryMix: 0), left: signal, right: signal, sampleRate: rate)
        #expect(left == signal && right == signal)
    }
}
