#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A looped, synthesized timbre: a steady spectrum (the loop) and an optional attack transient
/// (the frames before the loop start). One tone becomes several samples, one per key zone, each
/// band-limited so that the highest key of its zone does not alias.
struct Tone: Sendable {
    enum Transient: Sendable {
        case none
        /// Band-passed noise burst: centre frequency as a multiple of the root (or absolute Hz when
        /// `absolute`), Q, duration in seconds, level relative to the tone's peak.
        case noise(centre: Double, absolute: Bool, q: Double, duration: Double, level: Double)
        /// Decaying partials (ratio, amplitude) of the root that need not be periodic.
        case partials([(Double, Double)], duration: Double, level: Double)
    }

    var name: String
    /// Partials of the loop for a given root frequency (formant tones depend on it).
    var spectrum: @Sendable (Double) -> [Partial]
    /// Level of band-passed noise added to the loop (breath, bow, wind), relative to peak.
    var loopNoise: Double = 0
    /// Centre of the loop noise band, as a multiple of the root frequency.
    var loopNoiseCentre: Double = 3
    var transient: Transient = .none
    /// Loop length in frames; inharmonic tones need longer loops so their partials round finely.
    var loopLength: Int = 1024

    /// Key zones every tone is split into: (lowest key, highest key, target root key).
    static let zones: [(ClosedRange<Int>, Double)] = [(0...47, 36), (48...65, 57), (66...83, 74), (84...127, 96)]

    /// Frames before the loop: long enough for the transient, at least the 8 the spec requires.
    var attackLength: Int {
        switch transient {
        case .none: return 8
        case .noise(_, _, _, let duration, _), .partials(_, let duration, _):
            return max(64, Int((duration * Synthesis.sampleRate).rounded(.up)))
        }
    }

    /// Renders the sample for one key zone.
    func sample(zone: Int, seed: UInt64) -> SoundFont2Bank.Sample {
        let (keys, targetRoot) = Tone.zones[zone]
        let loop = loopLength
        let targetFrequency = Synthesis.frequency(ofNote: targetRoot)
        let cycles = max(1, Int((targetFrequency * Double(loop) / Synthesis.sampleRate).rounded()))
        let root = Double(cycles) * Synthesis.sampleRate / Double(loop)
        let note = Synthesis.midiNote(forFrequency: root)
        let rootKey = Int(note.rounded())
        let correction = Int(((Double(rootKey) - note) * 100).rounded())
        // Keep every partial below 18 kHz when the zone's highest key is played.
        let highest = Synthesis.frequency(ofNote: Double(keys.upperBound))
        let limit = min(18_000 * root / highest, Synthesis.sampleRate * 0.45)

        let attack = attackLength
        let count = attack + loop + 16
        var signal = Synthesis.additive(spectrum(root), count: count, loopLength: loop, cycles: cycles, limit: limit)
        var noise = NoiseSource(seed: seed &+ UInt64(zone) &* 7919)
        if loopNoise > 0 {
            let periodic = periodicNoise(length: loop, centre: min(root * loopNoiseCentre, limit), noise: &noise)
            let peak = signal.reduce(0) { max($0, abs($1)) }
            let noisePeak = periodic.reduce(0) { max($0, abs($1)) }
            let scale = noisePeak > 0 ? loopNoise * max(peak, 0.1) / noisePeak : 0
            for index in 0..<count { signal[index] += scale * periodic[index % loop] }
        }
        addTransient(to: &signal, attack: attack, root: root, limit: limit, noise: &noise)

        return SoundFont2Bank.Sample(
            name: "\(name)\(zone)", frames: Synthesis.quantize(signal), loopStart: attack, loopEnd: attack + loop,
            sampleRate: Int(Synthesis.sampleRate), rootKey: rootKey, pitchCorrection: correction)
    }

    /// Band-passed noise that repeats seamlessly every `length` frames: the filter runs over three
    /// periods of the same white noise and the last period is kept, so its state wraps around.
    private func periodicNoise(length: Int, centre: Double, noise: inout NoiseSource) -> [Double] {
        let white = (0..<length).map { _ in noise.next() }
        var filter = Biquad(.bandPass, frequency: max(centre, 60), q: 0.8, sampleRate: Synthesis.sampleRate)
        var output = [Double](repeating: 0, count: length)
        for pass in 0..<3 {
            for index in 0..<length {
                let value = filter.process(white[index])
                if pass == 2 { output[index] = value }
            }
        }
        return output
    }

    private func addTransient(
        to signal: inout [Double], attack: Int, root: Double, limit: Double, noise: inout NoiseSource
    ) {
        let peak = signal.reduce(0) { max($0, abs($1)) }
        switch transient {
        case .none:
            return
        case .noise(let centre, let absolute, let q, _, let level):
            let frequency = min(absolute ? centre : centre * root, limit)
            var filter = Biquad(.bandPass, frequency: frequency, q: q, sampleRate: Synthesis.sampleRate)
            var burst = (0..<attack).map { _ in filter.process(noise.next()) }
            let burstPeak = burst.reduce(0) { max($0, abs($1)) }
            guard burstPeak > 0 else { return }
            for index in 0..<attack {
                let envelope = pow(1 - Double(index) / Double(attack), 3)
                burst[index] *= envelope * level * max(peak, 0.1) / burstPeak
                signal[index] += burst[index]
            }
        case .partials(let partials, _, let level):
            for (ratio, amplitude) in partials where ratio * root < limit {
                let step = 2 * Double.pi * ratio * root / Synthesis.sampleRate
                for index in 0..<attack {
                    let envelope = pow(1 - Double(index) / Double(attack), 2)
                    signal[index] += level * max(peak, 0.1) * amplitude * envelope * sin(step * Double(index))
                }
            }
        }
    }
}

/// Spectral shapes used by the tones.
enum Spectrum {
    static func harmonics(_ count: Int = 64, _ amplitude: (Int) -> Double) -> [Partial] {
        (1...count).compactMap { h in
            let a = amplitude(h)
            return a == 0 ? nil : Partial(ratio: Double(h), amplitude: a)
        }
    }

    static func saw(rolloff: Double = 1) -> [Partial] { harmonics { 1 / pow(Double($0), rolloff) } }
    static func square(rolloff: Double = 1) -> [Partial] {
        harmonics { $0 % 2 == 1 ? 1 / pow(Double($0), rolloff) : 0 }
    }
    static func pulse(width: Double, rolloff: Double = 1) -> [Partial] {
        harmonics { sin(Double.pi * Double($0) * width) / pow(Double($0), rolloff) }
    }
    static func triangle() -> [Partial] {
        harmonics(31) { $0 % 2 == 1 ? (($0 / 2) % 2 == 0 ? 1 : -1) / Double($0 * $0) : 0 }
    }

    /// A harmonic spectrum shaped by resonances (formants), as voices and wind instruments have.
    static func formant(
        root: Double, rolloff: Double, formants: [(frequency: Double, width: Double, gain: Double)]
    ) -> [Partial] {
        harmonics(96) { h in
            let frequency = Double(h) * root
            var gain = 0.15
            for formant in formants {
                let distance = (frequency - formant.frequency) / formant.width
                gain += formant.gain * exp(-distance * distance)
            }
            return gain / pow(Double(h), rolloff)
        }
    }

    static func inharmonic(_ partials: [(Double, Double)]) -> [Partial] {
        partials.map { Partial(ratio: $0.0, amplitude: $0.1) }
    }
}
