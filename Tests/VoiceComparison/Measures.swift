import Foundation
import TestSupport

/// RMS level in decibels of 50 ms windows.
public func envelope(_ signal: [Float], window: Int = 2205) -> [Double] {
    stride(from: 0, to: signal.count - window + 1, by: window).map { start in
        let power = signal[start..<(start + window)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
        return 10 * log10(max(power, 1e-12))
    }
}

/// Pearson correlation of two series (over the shorter one's length).
public func correlation(_ a: [Double], _ b: [Double]) -> Double {
    let count = min(a.count, b.count)
    let (x, y) = (Array(a.prefix(count)), Array(b.prefix(count)))
    let (mx, my) = (x.reduce(0, +) / Double(count), y.reduce(0, +) / Double(count))
    var (sxy, sxx, syy) = (0.0, 0.0, 0.0)
    for i in 0..<count {
        sxy += (x[i] - mx) * (y[i] - my)
        sxx += (x[i] - mx) * (x[i] - mx)
        syy += (y[i] - my) * (y[i] - my)
    }
    return sxx > 0 && syy > 0 ? sxy / (sxx * syy).squareRoot() : (sxx == syy ? 1 : 0)
}

/// The power in each of the `size / 2` bins, summed over Hann windows of `size` frames that
/// overlap by half.
public func powerSpectrum(_ signal: [Float], size: Int) -> [Double] {
    var power = [Double](repeating: 0, count: size / 2)
    let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
    for start in stride(from: 0, to: signal.count - size, by: size / 2) {
        var real = (0..<size).map { Double(signal[start + $0]) * window[$0] }
        var imaginary = [Double](repeating: 0, count: size)
        fft(&real, &imaginary)
        for bin in 0..<(size / 2) { power[bin] += real[bin] * real[bin] + imaginary[bin] * imaginary[bin] }
    }
    return power
}

/// Power in 1/3-octave bands from 50 Hz to 16 kHz, in decibels relative to the total, averaged
/// over the whole signal (Hann windows of 4096 frames, a radix-2 FFT).
public func thirdOctaveSpectrum(_ signal: [Float]) -> [Double] {
    let size = 4096
    let power = powerSpectrum(signal, size: size)
    var bands: [Double] = []
    var centre = 50.0
    while centre <= 16_000 {
        let (low, high) = (centre / pow(2, 1.0 / 6), centre * pow(2, 1.0 / 6))
        let bins =
            Int(low * Double(size) / 44_100)...max(Int(low * Double(size) / 44_100), Int(high * Double(size) / 44_100))
        bands.append(bins.reduce(0.0) { $0 + power[min($1, size / 2 - 1)] })
        centre *= pow(2, 1.0 / 3)
    }
    let total = bands.reduce(0, +)
    return bands.map { 10 * log10(max($0 / total, 1e-12)) }
}

/// An in-place radix-2 FFT of a power-of-two length.
public func fft(_ real: inout [Double], _ imaginary: inout [Double]) {
    let count = real.count
    var j = 0
    for i in 1..<count {
        var bit = count >> 1
        while j & bit != 0 {
            j ^= bit
            bit >>= 1
        }
        j ^= bit
        if i < j {
            real.swapAt(i, j)
            imaginary.swapAt(i, j)
        }
    }
    var length = 2
    while length <= count {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: count, by: length) {
            for k in 0..<(length / 2) {
                let (wr, wi) = (cos(angle * Double(k)), sin(angle * Double(k)))
                let (a, b) = (start + k, start + k + length / 2)
                let tr = real[b] * wr - imaginary[b] * wi
                let ti = real[b] * wi + imaginary[b] * wr
                real[b] = real[a] - tr
                imaginary[b] = imaginary[a] - ti
                real[a] += tr
                imaginary[a] += ti
            }
        }
        length <<= 1
    }
}

/// The spectral centroid in Hz of `signal` at `sampleRate`: the power-weighted mean frequency,
/// averaged over Hann windows of 4096 frames (nil for silence or a signal shorter than a window).
public func spectralCentroid(_ signal: [Float], sampleRate: Double = 44_100) -> Double? {
    let size = 4096
    guard signal.count > size else { return nil }
    let power = powerSpectrum(signal, size: size)
    let total = power.reduce(0, +)
    guard total > 1e-12 else { return nil }
    let weighted = power.indices.reduce(0.0) { $0 + Double($1) * power[$1] }
    return weighted / total * sampleRate / Double(size)
}

/// Seconds from `releaseFrame` until the level (RMS over 10 ms windows, moved 1 ms at a time)
/// stays `drop` dB below its level over the 50 ms before the release (the last time it is above,
/// so that beating layers do not make it jump from one beat to the next): nil when it is still
/// above at the signal's end, or when the note was already silent (below −100 dBFS) at its release.
public func decaySeconds(
    _ signal: [Float], releaseFrame: Int, drop: Double = 60, sampleRate: Double = 44_100
) -> Double? {
    let before = Int(0.05 * sampleRate)
    guard releaseFrame >= before, releaseFrame <= signal.count else { return nil }
    let reference = rmsDecibels(Array(signal[(releaseFrame - before)..<releaseFrame]))
    guard reference > -100 else { return nil }
    let window = Int(0.01 * sampleRate)
    let hop = Int(0.001 * sampleRate)
    let threshold = pow(10, (reference - drop) / 10) * Double(window)
    var energy = signal[releaseFrame..<min(signal.count, releaseFrame + window)].reduce(0.0) {
        $0 + Double($1) * Double($1)
    }
    var start = releaseFrame
    var lastAbove: Int?
    while start + window <= signal.count {
        if energy >= threshold { lastAbove = start }
        guard start + hop + window <= signal.count else { break }
        for frame in start..<(start + hop) {
            energy += Double(signal[frame + window]) * Double(signal[frame + window])
            energy -= Double(signal[frame]) * Double(signal[frame])
        }
        start += hop
    }
    guard let lastAbove else { return 0 }
    guard lastAbove + hop + window <= signal.count else { return nil }
    return Double(lastAbove + hop - releaseFrame) / sampleRate
}

/// How far `signal`'s long-term 1/3-octave spectrum is from `reference`'s: the RMS in dB over the
/// bands within 40 dB of the reference's strongest (a quieter band holds under 0.01 % of the energy,
/// and a few onsets decide its level), and each of those bands' difference.
public func spectrumDeviation(_ signal: [Float], _ reference: [Float]) -> (rms: Double, bands: [Double]) {
    let bands = thirdOctaveSpectrum(reference)
    let strongest = bands.max() ?? 0
    let spectra = zip(thirdOctaveSpectrum(signal), bands).filter { $0.1 >= strongest - 40 }.map { $0 - $1 }
    return ((spectra.reduce(0) { $0 + $1 * $1 } / Double(spectra.count)).squareRoot(), spectra)
}
