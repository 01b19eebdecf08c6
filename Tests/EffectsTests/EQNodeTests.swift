import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import Effects

@Suite("EQ and filter nodes")
struct EQNodeTests {
    static let rates = [44_100.0, 48_000.0]

    /// The impulse response, long enough to have decayed by 120 dB (narrow, boosted low bands ring longest),
    /// without the tail whose magnitudes sum below 10⁻⁸: it cannot move a DTFT that these tests compare
    /// (at −40 dB and above) by 10⁻⁵ dB, and the DTFTs (a pass over the response per frequency) are most of
    /// the suite's time.
    func response(_ band: FilterBand, sampleRate: Double, design: FilterDesign = .cookbook) throws -> [Float] {
        let node = FilterNode(type: band.type, frequency: band.frequency, gain: band.gain, bandwidth: band.bandwidth)
        node.design = design
        let full = try process(
            node, impulse(band.frequency < 500 ? 65_536 : 16_384), sampleRate: sampleRate, quantum: 512)
        var tail = 0.0
        var length = full.count
        while length > 1 && tail + Double(abs(full[length - 1])) < 1e-8 {
            tail += Double(abs(full[length - 1]))
            length -= 1
        }
        return Array(full[..<length])
    }

    @Test(
        "every type matches the cookbook's analytic response within 0.05 dB up to 0.45 × rate",
        arguments: FilterType.allCases)
    func cookbookResponse(type: FilterType) throws {
        var worst = 0.0
        var cases = 0
        for rate in Self.rates {
            for f0 in [50.0, 200, 1_000, 5_000, 10_000, 15_000, 0.45 * rate] {
                for gain in type.usesGain ? [-12.0, 6, 18] : [0.0] {
                    for bandwidth in type.usesBandwidth ? [0.3, 1, 3] : [1.0] {
                        let measured = try response(
                            FilterBand(type: type, frequency: f0, gain: gain, bandwidth: bandwidth), sampleRate: rate)
                        for frequency in logSpaced(from: 20, to: 0.45 * rate, count: 24) {
                            let reference = cookbookReferenceDecibels(
                                type, f0: f0, gain: gain, bandwidth: bandwidth, at: frequency, sampleRate: rate)
                            let observed = measuredDecibels(measured, atFrequency: frequency, sampleRate: rate)
                            cases += 1
                            if reference > -40 {
                                worst = max(worst, abs(observed - reference))
                            } else {
                                // Deep in a stop band or a notch, decibels magnify float rounding:
                                // compare the linear magnitudes there.
                                let linear = abs(pow(10, observed / 20) - pow(10, reference / 20))
                                if linear > 1e-4 { worst = max(worst, 99) }
                            }
                        }
                    }
                }
            }
        }
        #expect(cases > 100)
        #expect(
            worst <= 0.05, "\(type): worst \(worst) dB over \(cases) points (99: a stop band off by more than 1e-4)")
    }

    @Test("point checks: peak at f0, Butterworth −3.01 dB, shelves at half gain, band-pass 0 dB, notch ≤ −80 dB")
    func pointChecks() throws {
        let rate = 48_000.0
        func at(_ band: FilterBand, _ frequency: Double) throws -> Double {
            measuredDecibels(try response(band, sampleRate: rate), atFrequency: frequency, sampleRate: rate)
        }
        #expect(abs(try at(FilterBand(type: .parametric, frequency: 1_000, gain: 9, bandwidth: 1), 1_000) - 9) < 0.01)
        #expect(abs(try at(FilterBand(type: .lowPass, frequency: 2_000), 2_000) + 3.0103) < 0.01)
        #expect(abs(try at(FilterBand(type: .highPass, frequency: 300), 300) + 3.0103) < 0.01)
        #expect(abs(try at(FilterBand(type: .lowShelf, frequency: 500, gain: 10), 500) - 5) < 0.01)
        #expect(abs(try at(FilterBand(type: .highShelf, frequency: 4_000, gain: -8), 4_000) + 4) < 0.01)
        #expect(abs(try at(FilterBand(type: .bandPass, frequency: 3_000, bandwidth: 0.5), 3_000)) < 0.01)
        // The notch, on a steady sine at its frequency (after the transient).
        let notch = FilterNode(type: .bandStop, frequency: 1_000, bandwidth: 1)
        let out = try process(notch, sine(1_000, amplitude: 1, count: 48_000, sampleRate: rate), sampleRate: rate)
        let peak = out[24_000...].map { abs(Double($0)) }.max()!
        #expect(20 * log10(peak) <= -80, "notch leaves \(20 * log10(peak)) dB")
    }

    @Test(
        "matched designs follow the analog prototype within 1 dB up to 0.45 × rate (measured ≤ 0.6 dB; the cookbook cramps)",
        arguments: [
            FilterType.lowPass, .highPass, .resonantLowPass, .resonantHighPass, .bandPass, .bandStop, .parametric,
            .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf,
        ])
    func matchedResponse(type: FilterType) throws {
        var worstMatched = 0.0
        var worstMatchedBelow40 = 0.0
        var worstCookbook = 0.0
        for rate in Self.rates {
            for f0 in [100.0, 1_000, 5_000, 10_000, 15_000, 19_500] {
                for gain in type.usesGain ? [-12.0, 12] : [0.0] {
                    // (0.05 octave: the narrowest, near Nyquist, where designs stray most.)
                    for bandwidth in type.usesBandwidth ? (f0 > 15_000 ? [0.05, 1] : [0.5, 1, 2]) : [1.0] {
                        let band = FilterBand(type: type, frequency: f0, gain: gain, bandwidth: bandwidth)
                        let matched = try response(band, sampleRate: rate, design: .matched)
                        let cookbook = try response(band, sampleRate: rate, design: .cookbook)
                        let across = logSpaced(
                            from: f0 * pow(2, -bandwidth), to: min(f0 * pow(2, bandwidth), 0.45 * rate), count: 7)
                        for frequency in logSpaced(from: 20, to: 0.45 * rate, count: 24) + across {
                            let analog = analogDecibels(type, f0: f0, gain: gain, bandwidth: bandwidth, at: frequency)
                            guard analog > -50 else { continue }
                            let deviation = abs(
                                measuredDecibels(matched, atFrequency: frequency, sampleRate: rate) - analog)
                            worstMatched = max(worstMatched, deviation)
                            if frequency <= 0.4 * rate { worstMatchedBelow40 = max(worstMatchedBelow40, deviation) }
                            worstCookbook = max(
                                worstCookbook,
                                abs(measuredDecibels(cookbook, atFrequency: frequency, sampleRate: rate) - analog))
                        }
                    }
                }
            }
        }
        #expect(
            worstMatchedBelow40 <= 1.0, "\(type): matched is \(worstMatchedBelow40) dB from analog up to 0.4 × rate")
        #expect(worstMatched <= 1.0, "\(type): matched is \(worstMatched) dB from analog up to 0.45 × rate")
        #expect(worstCookbook > worstMatched, "\(type): cookbook \(worstCookbook) dB, matched \(worstMatched) dB")
    }

    @Test(
        "matched designs on the parameters' whole range (10 Hz to 21 kHz, −96 to +24 dB, 0.05 to 5 octaves) stay within 1 dB up to 0.45 × rate",
        arguments: FilterType.allCases)
    func matchedDesignGrid(type: FilterType) {
        // The designed coefficients, evaluated on a dense grid (the test above runs the node itself):
        // 200 points from 20 Hz to 0.45 × rate and 61 across ±3 bandwidths around the frequency (and
        // around a resonant shelf's peak and dip), where the narrowest resonances would otherwise fall
        // between two points.
        var worst = (deviation: 0.0, f0: 0.0, gain: 0.0, bandwidth: 0.0, at: 0.0)
        for rate in Self.rates {
            for f0 in [10.0, 30, 100, 1_000, 5_000, 10_000, 15_000, 18_000, 19_500, 21_000] where f0 < 0.48 * rate {
                for gain in type.usesGain ? [-96.0, -48, -24, -12, 6, 12, 24] : [0.0] {
                    for bandwidth in type.usesBandwidth ? [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5] : [1.0] {
                        let band = FilterBand(type: type, frequency: f0, gain: gain, bandwidth: bandwidth)
                        let c = BandCoefficients(band, sampleRate: rate, design: .matched)
                        let root = pow(10, abs(gain) / 80)
                        var frequencies = logSpaced(from: 20, to: 0.45 * rate, count: 200)
                        for center in [f0, f0 / root, f0 * root] {
                            frequencies += logSpaced(
                                from: center * pow(2, -3 * bandwidth), to: center * pow(2, 3 * bandwidth), count: 61)
                        }
                        for frequency in frequencies where frequency >= 20 && frequency <= 0.45 * rate {
                            let analog = analogDecibels(type, f0: f0, gain: gain, bandwidth: bandwidth, at: frequency)
                            guard analog > -50 else { continue }
                            let measured = 20 * log10(c.magnitude(atFrequency: frequency, sampleRate: rate))
                            let deviation = abs(measured - analog)
                            if deviation > worst.deviation { worst = (deviation, f0, gain, bandwidth, frequency) }
                        }
                    }
                }
            }
        }
        #expect(worst.deviation <= 1.0, "\(type): \(worst)")
    }

    @Test(
        "matched: sweeping a band, and its settling into the two-section design, leave no zipper noise above 5 kHz",
        arguments: FilterType.allCases)
    func noZipperMatched(type: FilterType) throws {
        // The sweep, then 0.5 s in which the band settles (into the two-section design).
        let node = FilterNode(type: type, frequency: 600, gain: 0, bandwidth: 1.3885)
        node.design = .matched
        let residual = try sweepResidual(node, count: 72_000, channels: 2)
        #expect(residual <= -90, "\(type): residual \(residual) dBFS")
    }

    /// The zipper metric: a 440 Hz sine of `count` samples at 48 kHz through `node` while its gain
    /// steps 0 → +12 dB at 0.5 s and its frequency sweeps 600 → 2000 Hz and its bandwidth 1.39 → 0.3
    /// octaves from 0.625 s to 1 s; the peak (dBFS) of what lies above 5 kHz, from 20 000 samples on.
    func sweepResidual(_ node: FilterNode, count: Int, channels: Int = 1) throws -> Double {
        let rate = 48_000.0
        let signal = sine(440, amplitude: 0.5, count: count, sampleRate: rate)
        let output = try process(node, signal, sampleRate: rate, quantum: 128, channels: channels) { position in
            if position >= 24_000 { node.band.gain = 12 }
            if position >= 30_000 && position < 48_000 {
                let t = Double(position - 30_000) / 18_000
                node.band.frequency = 600 * pow(2_000 / 600, t)
                node.band.bandwidth = 1.3885 - 1.0885 * t
            }
        }
        let residual = butterworthHighPass8(output, cutoff: 5_000, sampleRate: rate)
        return 20 * log10(residual[20_000...].map(abs).max()!)
    }

    @Test(
        "matched bands stay stable through jumps: settled high and sent low in one step, types toggled while cross-fading"
    )
    func matchedJumpsStayStable() throws {
        let rate = 48_000.0
        var generator = SplitMix(seed: 9)
        let noise = (0..<36_000).map { _ in Float.random(in: -0.25...0.25, using: &generator) }
        let cases: [(FilterType, Double, Double, Double)] = [
            (.highShelf, 24, 18_000, 100), (.highShelf, 12, 16_000, 200), (.lowShelf, 12, 15_000, 50),
            (.highShelf, 9, 14_000, 300), (.resonantHighShelf, 12, 16_000, 200), (.resonantLowShelf, -12, 40, 18_000),
            (.parametric, 18, 18_000, 60), (.resonantLowPass, 0, 20_000, 30),
        ]
        for (type, gain, from, to) in cases {
            let node = FilterNode(type: type, frequency: from, gain: gain, bandwidth: 0.5)
            node.design = .matched
            // Settled at `from` (the two-section design), then sent to `to` in one step; once that has
            // settled, the type toggles every 384 samples, into and out of cross-fades.
            let output = try process(node, noise, sampleRate: rate, quantum: 128, channels: 2) { position in
                if position == 6_016 { node.band.frequency = to }
                if position >= 24_064 && position % 384 == 0 {
                    node.band.filterType = node.band.filterType == type ? .parametric : type
                }
            }
            // (Toggling types is abrupt by design: its transients reach 24 here, in the cookbook too;
            // an unstable section would grow without bound.)
            let peak = output.map { abs(Double($0)) }.max()!
            #expect(output.allSatisfy(\.isFinite) && peak < 64, "\(type) \(from) → \(to) Hz: peak \(peak)")
        }
    }

    @Test("sweeping a band while a sine plays leaves no zipper noise above 5 kHz (a hard coefficient step would)")
    func noZipper() throws {
        let rate = 48_000.0
        let signal = sine(440, amplitude: 0.5, count: 48_000, sampleRate: rate)
        // The sweep to its end: the node glides.
        let node = FilterNode(type: .parametric, frequency: 600, gain: 0, bandwidth: 1.3885)
        let residual = try sweepResidual(node, count: 48_000)
        #expect(residual <= -90, "residual \(residual) dBFS")

        // The same gain step applied to the coefficients at once: the metric hears it.
        let before = BiquadCoefficients(
            FilterBand(type: .parametric, frequency: 600, gain: 0, bandwidth: 1.3885), sampleRate: rate)
        let after = BiquadCoefficients(
            FilterBand(type: .parametric, frequency: 600, gain: 12, bandwidth: 1.3885), sampleRate: rate)
        var (z1, z2) = (0.0, 0.0)
        let stepped: [Float] = signal.enumerated().map { index, sample in
            let c = index < 24_000 ? before : after
            let x = Double(sample)
            let y = c.b0 * x + z1
            z1 = c.b1 * x - c.a1 * y + z2
            z2 = c.b2 * x - c.a2 * y
            return Float(y)
        }
        let steppedPeak = butterworthHighPass8(stepped, cutoff: 5_000, sampleRate: rate)[20_000...].map(abs).max()!
        #expect(20 * log10(steppedPeak) > -80, "a hard step gives \(20 * log10(steppedPeak)) dBFS")
    }

    @Test("a bypassed band and 0 dB global gain pass the input bit for bit; bands start bypassed as in AVAudioUnitEQ")
    func bypass() throws {
        let eq = EQNode(numberOfBands: 4)
        #expect(eq.bands.allSatisfy { $0.bypass })
        let signal = sine(997, amplitude: 0.7, count: 10_000, sampleRate: 44_100)
        #expect(try process(eq, signal, sampleRate: 44_100) == signal)
        eq.bands[1].bypass = false
        eq.bands[1].settings = FilterBand(type: .highShelf, frequency: 3_000, gain: 6)
        let shelved = try process(eq, signal, sampleRate: 44_100)
        #expect(shelved != signal)
        // Bypassing while it plays fades out, then passes the input exactly.
        let faded = try process(eq, signal, sampleRate: 44_100) { position in
            if position >= 2_000 { eq.bands[1].bypass = true }
        }
        #expect(Array(faded[3_000...]) == Array(signal[3_000...]))
    }

    @Test("four bands and global gain: the response is the product of the bands' responses")
    func fourBands() throws {
        let rate = 44_100.0
        let eq = EQNode(numberOfBands: 4)
        let settings = [
            FilterBand(type: .lowShelf, frequency: 100, gain: 4),
            FilterBand(type: .parametric, frequency: 500, gain: -6, bandwidth: 1),
            FilterBand(type: .parametric, frequency: 3_000, gain: 3, bandwidth: 2),
            FilterBand(type: .highShelf, frequency: 8_000, gain: -3),
        ]
        for (band, setting) in zip(eq.bands, settings) {
            band.settings = setting
            band.bypass = false
        }
        eq.globalGain = -2
        let measured = try process(eq, impulse(16_384), sampleRate: rate, quantum: 512)
        for frequency in logSpaced(from: 30, to: 18_000, count: 30) {
            let expected =
                settings.map {
                    cookbookReferenceDecibels(
                        $0.type, f0: $0.frequency, gain: $0.gain, bandwidth: $0.bandwidth, at: frequency,
                        sampleRate: rate)
                }.reduce(0, +) - 2
            #expect(abs(measuredDecibels(measured, atFrequency: frequency, sampleRate: rate) - expected) < 0.05)
        }
    }
}

extension EQNodeTests {
    @Test(
        "stereo settled bands (four frames at a time, two sections fused) equal the direct form I, any quantum size",
        arguments: FilterDesign.allCases)
    func stereoFastPath(design: FilterDesign) throws {
        let rate = 48_000.0
        var generator = SplitMix(seed: 5)
        let count = 6_000
        let signal = (0..<2).map { _ in (0..<count).map { _ in Float.random(in: -0.5...0.5, using: &generator) } }
        let types = FilterType.allCases
        // Cookbook, one section per band: 1 band: the single path; 2: a fused pair; 3: a pair and a
        // single; 4 with the second bypassed: a pair fused across the bypassed band, then a single.
        // Matched, two sections per band (but a band of 0 dB gain): pairs within a band and across bands.
        for bandCount in 1...4 {
            let eq = EQNode(numberOfBands: bandCount)
            eq.design = design
            var active: [BiquadCoefficients] = []
            for (index, band) in eq.bands.enumerated() {
                let type = types[(3 * bandCount + index) % types.count]
                band.settings = FilterBand(
                    type: type, frequency: [80.0, 700, 3_000, 12_000][index], gain: [6.0, -9, 3, -4][index],
                    bandwidth: [0.5, 1, 2, 0.3][index])
                band.bypass = bandCount == 4 && index == 1
                if !band.bypass {
                    let sections = BandCoefficients(band.settings, sampleRate: rate, design: design)
                    active.append(sections.main)
                    if sections.correction != .identity { active.append(sections.correction) }
                }
            }
            try eq.prepare(format: AudioFormat(sampleRate: rate, channelCount: 2), maximumFrameCount: 512)
            let input = AudioBuffer(channelCount: 2, frameCapacity: 512)
            let output = AudioBuffer(channelCount: 2, frameCapacity: 512)
            var result: [[Float]] = [[], []]
            var position = 0
            var quantumIndex = 0
            while position < count {
                let quantum = min([61, 512, 3, 256, 1, 100][quantumIndex % 6], count - position)
                quantumIndex += 1
                for channel in 0..<2 {
                    for frame in 0..<quantum { input.channel(channel)[frame] = signal[channel][position + frame] }
                }
                eq.process(
                    input, into: output, frameCount: quantum,
                    time: AudioTime(sampleTime: Int64(position), sampleRate: rate))
                for channel in 0..<2 {
                    result[channel] += UnsafeBufferPointer(start: output.channel(channel), count: quantum)
                }
                position += quantum
            }
            var worst = 0.0
            for channel in 0..<2 {
                var samples = signal[channel].map(Double.init)
                for c in active {
                    var (x1, x2, y1, y2) = (0.0, 0.0, 0.0, 0.0)
                    for index in samples.indices {
                        let x = samples[index]
                        let y = c.b0 * x + c.b1 * x1 + c.b2 * x2 - c.a1 * y1 - c.a2 * y2
                        (x2, x1, y2, y1) = (x1, x, y1, y)
                        samples[index] = Double(Float(y))  // each section's output is single precision
                    }
                }
                for index in samples.indices {
                    worst = max(worst, abs(Double(result[channel][index]) - samples[index]))
                }
            }
            #expect(worst < 1e-5, "\(bandCount) bands: off by \(worst)")
            if design == .matched { #expect(active.count > bandCount, "the matched bands have corrections") }
        }
    }
}

extension EQNodeTests {
    @Test("the eq and filter Q range is the bandwidth range, 0.05 to 5 octaves, as Q (no value clamped silently)")
    func qRange() {
        func octaves(_ q: Double) -> Double { 2 * asinh(1 / (2 * q)) / log(2) }
        let range = EffectDescription.qRange
        #expect(octaves(range.upperBound) >= 0.05 && octaves(range.upperBound) < 0.0505)
        #expect(octaves(range.lowerBound) <= 5 && octaves(range.lowerBound) > 4.85)
    }
}

@Suite("EQ changes while playing")
struct EQChangeTests {
    @Test(
        "a band at Nyquist (22 050 Hz at 44.1 kHz, 16 kHz at 32 kHz), any type and width: finite, stable, and so is its output"
    )
    func nyquist() throws {
        var generator = SplitMix(seed: 3)
        let noise = (0..<4_096).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        for (rate, frequency) in [(44_100.0, 22_050.0), (44_100, 22_040), (32_000, 16_000)] {
            for type in FilterType.allCases {
                for bandwidth in [0.05, 1, 5] {
                    for design in FilterDesign.allCases {
                        let band = FilterBand(type: type, frequency: frequency, gain: 12, bandwidth: bandwidth)
                        let c = BandCoefficients(band, sampleRate: rate, design: design)
                        let values = [c.main.b0, c.main.b1, c.main.b2, c.main.a1, c.main.a2]
                        #expect(values.allSatisfy(\.isFinite) && abs(c.main.a2) < 1, "\(type) \(bandwidth) \(design)")
                        let node = FilterNode(type: type, frequency: frequency, gain: 12, bandwidth: bandwidth)
                        node.design = design
                        let output = try process(node, noise, sampleRate: rate, channels: 2)
                        #expect(output.allSatisfy { $0.isFinite && abs($0) < 100 }, "\(type) \(bandwidth) \(design)")
                    }
                }
            }
        }
    }

    @Test("changing a parameter the band's type ignores (a low-pass's gain, a shelf's bandwidth) changes nothing")
    func ignoredParameters() throws {
        var generator = SplitMix(seed: 4)
        let noise = (0..<20_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        for (type, design) in [
            (FilterType.lowPass, FilterDesign.matched), (.highShelf, .matched), (.bandStop, .cookbook),
        ] {
            func run(changing: Bool) throws -> [Float] {
                let node = FilterNode(type: type, frequency: 12_000, gain: 6, bandwidth: 1)
                node.design = design
                return try process(node, noise, sampleRate: 48_000, channels: 2) { position in
                    guard changing, position == 4_096 else { return }
                    if type.usesGain { node.band.bandwidth = 0.2 } else { node.band.gain = -20 }
                }
            }
            #expect(try run(changing: true) == run(changing: false), "\(type)")
        }
    }

    @Test("a band bypassed in the middle of a glide comes back at its new settings, not still gliding")
    func bypassMidGlide() throws {
        let rate = 48_000.0
        let node = FilterNode(type: .parametric, frequency: 1_000, gain: 12, bandwidth: 1)
        node.design = .matched
        let back = 16_384
        var signal = [Float](repeating: 0, count: back + 1_440 + 8_192)
        signal[back + 1_440] = 1  // 30 ms after it comes back
        let output = try process(node, signal, sampleRate: rate, quantum: 128, channels: 2) { position in
            if position == 4_096 { node.band.frequency = 8_000 }
            if position == 4_096 + 256 { node.band.bypass = true }  // 5 ms into the glide
            if position == back { node.band.bypass = false }
        }
        let response = Array(output[(back + 1_440)...])
        let expected = BandCoefficients(node.band.settings, sampleRate: rate, design: .matched)
        for frequency in [1_000.0, 3_000, 8_000, 15_000] {
            let measured = measuredDecibels(response, atFrequency: frequency, sampleRate: rate)
            let reference = 20 * log10(expected.magnitude(atFrequency: frequency, sampleRate: rate))
            #expect(abs(measured - reference) < 0.05, "\(frequency) Hz: \(measured) dB, expected \(reference) dB")
        }
    }

    @Test("sixteen matched bands that settle at once all reach their settled design (one design per 512 frames)")
    func manyBandsSettle() throws {
        let rate = 48_000.0
        let eq = EQNode(numberOfBands: 16)
        eq.design = .matched
        let types: [FilterType] = [.resonantHighShelf, .parametric, .resonantLowShelf, .highShelf]
        for (index, band) in eq.bands.enumerated() {
            band.settings = FilterBand(
                type: types[index % 4], frequency: 12_000 + 500 * Double(index), gain: 0, bandwidth: 0.3)
            band.bypass = false
        }
        let gains = (0..<16).map { $0 % 2 == 0 ? 2.0 : -1.5 }
        var signal = [Float](repeating: 0, count: 40_000)
        signal[32_768] = 1  // long after every band has settled
        // All the gains change at once: the bands glide together, settle in the same sub-block, and
        // their settled designs are spread over the following quanta.
        let output = try process(eq, signal, sampleRate: rate, quantum: 256, channels: 2) { position in
            if position == 256 { for (band, gain) in zip(eq.bands, gains) { band.gain = gain } }
        }
        let response = Array(output[32_768...])
        let settled = eq.bands.map { BandCoefficients($0.settings, sampleRate: rate, design: .matched) }
        let closed = eq.bands.map { BandCoefficients($0.settings, sampleRate: rate, design: .matched, refined: false) }
        var separation = 0.0
        for frequency in [1_000.0, 12_000, 14_000, 16_000, 18_000, 20_000] {
            let measured = measuredDecibels(response, atFrequency: frequency, sampleRate: rate)
            let expected = settled.map { 20 * log10($0.magnitude(atFrequency: frequency, sampleRate: rate)) }.reduce(
                0, +)
            let gliding = closed.map { 20 * log10($0.magnitude(atFrequency: frequency, sampleRate: rate)) }.reduce(0, +)
            separation = max(separation, abs(gliding - expected))
            #expect(abs(measured - expected) < 0.05, "\(frequency) Hz: \(measured) dB, settled design \(expected) dB")
        }
        // The closed-form (gliding) designs are measurably elsewhere: a band left on them would fail.
        #expect(separation > 0.5, "closed form within \(separation) dB of the settled designs")
    }

    @Test("changing a band's type or the design while playing reaches the new response")
    func typeAndDesignChanges() throws {
        let rate = 48_000.0
        let node = FilterNode(type: .lowPass, frequency: 1_000)
        var signal = [Float](repeating: 0, count: 40_000)
        signal[30_000] = 1  // an impulse after the changes have settled
        let output = try process(node, signal, sampleRate: rate, quantum: 256) { position in
            if position >= 4_096 { node.band.filterType = .highPass }
            if position >= 8_192 { node.design = .matched }
        }
        let response = Array(output[30_000...])
        let expected = BandCoefficients(
            FilterBand(type: .highPass, frequency: 1_000), sampleRate: rate, design: .matched)
        for frequency in [100.0, 1_000, 10_000] {
            let measured = measuredDecibels(response, atFrequency: frequency, sampleRate: rate)
            let reference = 20 * log10(expected.magnitude(atFrequency: frequency, sampleRate: rate))
            #expect(abs(measured - reference) < 0.05, "\(frequency) Hz: \(measured) dB, expected \(reference) dB")
        }
    }
}
