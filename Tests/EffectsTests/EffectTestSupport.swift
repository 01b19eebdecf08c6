import Foundation

@testable import AudioGraph
@testable import Effects

/// Runs a node over a mono signal, quantum by quantum, calling `between` before each quantum
/// (to change parameters as a control thread would). Returns the output's first channel.
func process(
    _ node: AudioNode, _ signal: [Float], sampleRate: Double, quantum: Int = 256, channels: Int = 1,
    between: (Int) -> Void = { _ in }
) throws -> [Float] {
    try node.prepare(format: AudioFormat(sampleRate: sampleRate, channelCount: channels), maximumFrameCount: quantum)
    let input = AudioBuffer(channelCount: channels, frameCapacity: quantum)
    let output = AudioBuffer(channelCount: channels, frameCapacity: quantum)
    var result: [Float] = []
    result.reserveCapacity(signal.count)
    var position = 0
    var slot: Unmanaged<AudioBuffer>? = Unmanaged.passUnretained(input)
    while position < signal.count {
        let count = min(quantum, signal.count - position)
        between(position)
        for channel in 0..<channels {
            for frame in 0..<count { input.channel(channel)[frame] = signal[position + frame] }
        }
        withUnsafePointer(to: &slot) { pointer in
            let inputs = RenderInputs(buffers: UnsafeBufferPointer(start: pointer, count: 1))
            node.render(
                into: output, inputs: inputs, frameCount: count,
                time: AudioTime(sampleTime: Int64(position), sampleRate: sampleRate))
        }
        result += UnsafeBufferPointer(start: output.channel(0), count: count)
        position += count
    }
    return result
}

/// |H(e^jω)| of a response, by direct evaluation of its DTFT, in dB.
func measuredDecibels(_ response: [Float], atFrequency frequency: Double, sampleRate: Double) -> Double {
    let w = 2 * Double.pi * frequency / sampleRate
    var real = 0.0
    var imaginary = 0.0
    // A rotating phasor, renormalised now and then.
    var (c, s) = (1.0, 0.0)
    let (cw, sw) = (cos(w), sin(w))
    for (index, sample) in response.enumerated() {
        real += Double(sample) * c
        imaginary -= Double(sample) * s
        (c, s) = (c * cw - s * sw, s * cw + c * sw)
        if index & 1023 == 1023 {
            let norm = (c * c + s * s).squareRoot()
            (c, s) = (c / norm, s / norm)
        }
    }
    return 10 * log10(max(real * real + imaginary * imaginary, 1e-30))
}

func logSpaced(from low: Double, to high: Double, count: Int) -> [Double] {
    (0..<count).map { low * pow(high / low, Double($0) / Double(count - 1)) }
}

/// The cookbook's formulas, written out again for the tests (independently of Effects' code):
/// the digital magnitude response in dB.
func cookbookReferenceDecibels(
    _ type: FilterType, f0: Double, gain: Double, bandwidth: Double, at frequency: Double, sampleRate: Double
) -> Double {
    let w0 = 2 * Double.pi * f0 / sampleRate
    let (cs, sn) = (cos(w0), sin(w0))
    let amplitude = pow(10, gain / 40)
    let alphaBandwidth = sn * sinh(log(2) / 2 * bandwidth * w0 / sn)
    let q = 1 / (2 * sinh(log(2) / 2 * bandwidth))
    let alphaQ = sn / (2 * q)
    var b = [0.0, 0, 0]
    var a = [0.0, 0, 0]
    switch type {
    case .lowPass, .resonantLowPass:
        let alpha = type == .lowPass ? sn / (2 * 0.5.squareRoot()) : alphaQ
        b = [(1 - cs) / 2, 1 - cs, (1 - cs) / 2]
        a = [1 + alpha, -2 * cs, 1 - alpha]
    case .highPass, .resonantHighPass:
        let alpha = type == .highPass ? sn / (2 * 0.5.squareRoot()) : alphaQ
        b = [(1 + cs) / 2, -(1 + cs), (1 + cs) / 2]
        a = [1 + alpha, -2 * cs, 1 - alpha]
    case .bandPass:
        b = [alphaBandwidth, 0, -alphaBandwidth]
        a = [1 + alphaBandwidth, -2 * cs, 1 - alphaBandwidth]
    case .bandStop:
        b = [1, -2 * cs, 1]
        a = [1 + alphaBandwidth, -2 * cs, 1 - alphaBandwidth]
    case .parametric:
        b = [1 + alphaBandwidth * amplitude, -2 * cs, 1 - alphaBandwidth * amplitude]
        a = [1 + alphaBandwidth / amplitude, -2 * cs, 1 - alphaBandwidth / amplitude]
    case .lowShelf, .resonantLowShelf, .highShelf, .resonantHighShelf:
        // S = 1: alpha = sin(w0)/2 * sqrt(2).
        let alpha = type == .lowShelf || type == .highShelf ? sn / 2 * 2.0.squareRoot() : alphaQ
        let k = 2 * amplitude.squareRoot() * alpha
        let (p, m) = (amplitude + 1, amplitude - 1)
        if type == .lowShelf || type == .resonantLowShelf {
            b = [amplitude * (p - m * cs + k), 2 * amplitude * (m - p * cs), amplitude * (p - m * cs - k)]
            a = [p + m * cs + k, -2 * (m + p * cs), p + m * cs - k]
        } else {
            b = [amplitude * (p + m * cs + k), -2 * amplitude * (m + p * cs), amplitude * (p + m * cs - k)]
            a = [p - m * cs + k, 2 * (m - p * cs), p - m * cs - k]
        }
    }
    let w = 2 * Double.pi * frequency / sampleRate
    func power(_ c: [Double]) -> Double {
        let real = c[0] + c[1] * cos(w) + c[2] * cos(2 * w)
        let imaginary = c[1] * sin(w) + c[2] * sin(2 * w)
        return real * real + imaginary * imaginary
    }
    return 10 * log10(max(power(b) / power(a), 1e-30))
}

/// The analog prototypes (s = jΩ/Ω0), in dB, for the matched designs.
func analogDecibels(_ type: FilterType, f0: Double, gain: Double, bandwidth: Double, at frequency: Double) -> Double {
    let plain = type == .lowPass || type == .highPass || type == .lowShelf || type == .highShelf
    let q = plain ? 0.5.squareRoot() : 1 / (2 * sinh(log(2) / 2 * bandwidth))
    let x = frequency / f0
    // Denominator s² + s/Q + 1 at s = jx: (1 - x²) + j x/Q.
    func magnitude2(_ real: Double, _ imaginary: Double) -> Double { real * real + imaginary * imaginary }
    let denominator = magnitude2(1 - x * x, x / q)
    switch type {
    case .lowPass, .resonantLowPass: return 10 * log10(1 / denominator)
    case .highPass, .resonantHighPass: return 10 * log10(x * x * x * x / denominator)
    case .bandPass: return 10 * log10((x / q) * (x / q) / denominator)
    case .bandStop: return 10 * log10(max((1 - x * x) * (1 - x * x) / denominator, 1e-30))
    case .lowShelf, .resonantLowShelf, .highShelf, .resonantHighShelf:
        // Low shelf A·(s² + (√A/Q)s + A)/(A s² + (√A/Q)s + 1); the high shelf swaps the outer
        // coefficients of numerator and denominator.
        let a = pow(10, gain / 40)
        let low = magnitude2(a - x * x, a.squareRoot() * x / q)
        let high = magnitude2(1 - a * x * x, a.squareRoot() * x / q)
        let shelf = type == .lowShelf || type == .resonantLowShelf ? low / high : high / low
        return 10 * log10(a * a * shelf)
    default:  // parametric: (s² + s·A/Q + 1)/(s² + s/(A·Q) + 1) with A² = G
        let amplitude = pow(10, gain / 40)
        return 10 * log10(magnitude2(1 - x * x, x * amplitude / q) / magnitude2(1 - x * x, x / (amplitude * q)))
    }
}

func impulse(_ count: Int) -> [Float] {
    var signal = [Float](repeating: 0, count: count)
    signal[0] = 1
    return signal
}

func sine(_ frequency: Double, amplitude: Double, count: Int, sampleRate: Double) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
}

/// An 8th-order Butterworth high-pass (four cascaded sections), in double precision.
func butterworthHighPass8(_ signal: [Float], cutoff: Double, sampleRate: Double) -> [Double] {
    var data = signal.map(Double.init)
    for k in 0..<4 {
        let q = 1 / (2 * cos(Double.pi * (2 * Double(k) + 1) / 16))
        let w0 = 2 * Double.pi * cutoff / sampleRate
        let alpha = sin(w0) / (2 * q)
        let a0 = 1 + alpha
        let b = [(1 + cos(w0)) / 2 / a0, -(1 + cos(w0)) / a0, (1 + cos(w0)) / 2 / a0]
        let a = [-2 * cos(w0) / a0, (1 - alpha) / a0]
        var (z1, z2) = (0.0, 0.0)
        for index in data.indices {
            let x = data[index]
            let y = b[0] * x + z1
            z1 = b[1] * x - a[0] * y + z2
            z2 = b[2] * x - a[1] * y
            data[index] = y
        }
    }
    return data
}
