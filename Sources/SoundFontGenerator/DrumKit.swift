#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The General MIDI percussion map (notes 35-81), synthesized: pitch-swept sines for kicks and
/// toms, filtered noise for snares, hats and shakers, clusters of square waves for metal.
enum DrumKit {
    static let names: [Int: String] = [
        35: "Acoustic Bass Drum", 36: "Bass Drum 1", 37: "Side Stick", 38: "Acoustic Snare", 39: "Hand Clap",
        40: "Electric Snare", 41: "Low Floor Tom", 42: "Closed Hi-Hat", 43: "High Floor Tom", 44: "Pedal Hi-Hat",
        45: "Low Tom", 46: "Open Hi-Hat", 47: "Low-Mid Tom", 48: "Hi-Mid Tom", 49: "Crash Cymbal 1", 50: "High Tom",
        51: "Ride Cymbal 1", 52: "Chinese Cymbal", 53: "Ride Bell", 54: "Tambourine", 55: "Splash Cymbal",
        56: "Cowbell", 57: "Crash Cymbal 2", 58: "Vibraslap", 59: "Ride Cymbal 2", 60: "Hi Bongo", 61: "Low Bongo",
        62: "Mute Hi Conga", 63: "Open Hi Conga", 64: "Low Conga", 65: "High Timbale", 66: "Low Timbale",
        67: "High Agogo", 68: "Low Agogo", 69: "Cabasa", 70: "Maracas", 71: "Short Whistle", 72: "Long Whistle",
        73: "Short Guiro", 74: "Long Guiro", 75: "Claves", 76: "Hi Wood Block", 77: "Low Wood Block",
        78: "Mute Cuica", 79: "Open Cuica", 80: "Mute Triangle", 81: "Open Triangle",
    ]

    /// A drum sound: its frames, an optional loop (for long metal decays shaped by the volume
    /// envelope), the decay of that envelope, and the hi-hat choke group.
    struct Hit {
        var frames: [Double]
        var loop: Range<Int>?
        var decay: Double
        var exclusiveClass = 0
        var pan = 0
    }

    /// Drums whose content stays below 10 kHz are stored at half rate to keep the font small.
    static let halfRateNotes: Set<Int> = [
        35, 36, 41, 43, 45, 47, 48, 50, 58, 60, 61, 62, 63, 64, 71, 72, 73, 74, 78, 79,
    ]

    static func sampleRate(note: Int) -> Double {
        halfRateNotes.contains(note) ? Synthesis.sampleRate / 2 : Synthesis.sampleRate
    }

    static func hit(note: Int) -> Hit {
        var hit = DrumSynthesizer(rate: sampleRate(note: note)).hit(note: note)
        // Saturation, as drum samples are usually compressed: it raises the body of spiky hits
        // (hats, shakers, claps, cymbals) relative to their first peak. Sample by sample, so a
        // loop stays seamless.
        let peak = hit.frames.reduce(0) { max($0, abs($1)) }
        if peak > 0 { hit.frames = hit.frames.map { tanh(3 * $0 / peak) } }
        if hit.loop == nil {
            // A short fade so that a sample cut where its decay is already quiet does not click.
            let fade = min(hit.frames.count, Int(sampleRate(note: note) * 0.01))
            for index in 0..<fade { hit.frames[hit.frames.count - 1 - index] *= Double(index) / Double(fade) }
        }
        return hit
    }
}

/// The synthesis recipes of the kit at one sample rate.
private struct DrumSynthesizer {
    typealias Hit = DrumKit.Hit
    let rate: Double

    func hit(note: Int) -> Hit {
        var noise = NoiseSource(seed: UInt64(note) &* 0x1234_5678_9ABC)
        switch note {
        case 35: return Hit(frames: kick(start: 120, end: 42, length: 0.45, click: 0.3, noise: &noise), decay: 0.45)
        case 36: return Hit(frames: kick(start: 160, end: 50, length: 0.35, click: 0.5, noise: &noise), decay: 0.35)
        case 37:
            return Hit(
                frames: mix(tone(820, 0.05, decay: 0.015), filtered(&noise, .bandPass, 2200, q: 2, 0.04, decay: 0.01)),
                decay: 0.05)
        case 38: return Hit(frames: snare(tone: 185, noiseDecay: 0.12, length: 0.3, noise: &noise), decay: 0.3)
        case 40: return Hit(frames: snare(tone: 220, noiseDecay: 0.08, length: 0.22, noise: &noise), decay: 0.22)
        case 39: return Hit(frames: clap(&noise), decay: 0.25)
        case 41, 43, 45, 47, 48, 50:
            let index = [41, 43, 45, 47, 48, 50].firstIndex(of: note) ?? 0
            let pitch = 80 * pow(1.2, Double(index))
            return Hit(frames: tom(pitch, noise: &noise), decay: 0.5, pan: (index - 3) * 80)
        case 42: return Hit(frames: hat(&noise, length: 0.1, decay: 0.03), decay: 0.1, exclusiveClass: 1, pan: -150)
        case 44: return Hit(frames: hat(&noise, length: 0.12, decay: 0.04), decay: 0.12, exclusiveClass: 1, pan: -150)
        case 46: return cymbal(&noise, bright: 7000, attack: 0.05, decay: 0.6, exclusiveClass: 1, pan: -150)
        case 49: return cymbal(&noise, bright: 5000, attack: 0.1, decay: 2.5, pan: 200)
        case 57: return cymbal(&noise, bright: 4500, attack: 0.1, decay: 2.5, pan: -200)
        case 51: return cymbal(&noise, bright: 8000, attack: 0.03, decay: 2, pan: 250)
        case 59: return cymbal(&noise, bright: 7500, attack: 0.03, decay: 1.8, pan: 250)
        case 52: return cymbal(&noise, bright: 3500, attack: 0.08, decay: 1.5, pan: -250)
        case 55: return cymbal(&noise, bright: 6000, attack: 0.04, decay: 0.9, pan: 250)
        case 53: return ringing([523, 1245, 1860, 2540], square: true, decay: 0.9, pan: 250)
        case 54:
            return Hit(
                frames: mix(
                    filtered(&noise, .highPass, 7000, q: 0.7, 0.25, decay: 0.07),
                    metal([4200, 5300, 6700], length: 0.25, decay: 0.08, noise: &noise)), decay: 0.25, pan: 200)
        case 56: return Hit(frames: metal([540, 800], length: 0.3, decay: 0.08, noise: &noise), decay: 0.3, pan: 150)
        case 58: return Hit(frames: rattle(&noise), decay: 0.8)
        case 60: return Hit(frames: drumHead(420, 0.15, sweep: 1.1, noise: &noise), decay: 0.15, pan: 150)
        case 61: return Hit(frames: drumHead(300, 0.2, sweep: 1.1, noise: &noise), decay: 0.2, pan: 150)
        case 62: return Hit(frames: drumHead(330, 0.08, sweep: 1.05, noise: &noise), decay: 0.08, pan: -150)
        case 63: return Hit(frames: drumHead(330, 0.3, sweep: 1.05, noise: &noise), decay: 0.3, pan: -150)
        case 64: return Hit(frames: drumHead(220, 0.35, sweep: 1.05, noise: &noise), decay: 0.35, pan: -150)
        case 65:
            return Hit(
                frames: mix(
                    drumHead(620, 0.3, sweep: 1.02, noise: &noise),
                    metal([1450, 2300], length: 0.3, decay: 0.1, noise: &noise)), decay: 0.3, pan: 200)
        case 66:
            return Hit(
                frames: mix(
                    drumHead(420, 0.35, sweep: 1.02, noise: &noise),
                    metal([1100, 1900], length: 0.35, decay: 0.1, noise: &noise)), decay: 0.35, pan: 200)
        case 67:
            return Hit(frames: mix(tone(930, 0.3, decay: 0.1), tone(2480, 0.3, decay: 0.05)), decay: 0.3, pan: -200)
        case 68:
            return Hit(frames: mix(tone(700, 0.35, decay: 0.12), tone(1860, 0.35, decay: 0.05)), decay: 0.35, pan: -200)
        case 69: return Hit(frames: filtered(&noise, .highPass, 5000, q: 0.7, 0.15, decay: 0.04), decay: 0.15, pan: 250)
        case 70: return Hit(frames: filtered(&noise, .highPass, 6000, q: 0.7, 0.1, decay: 0.03), decay: 0.1, pan: 250)
        case 71: return Hit(frames: whistle(length: 0.12), decay: 0.12)
        case 72: return Hit(frames: whistle(length: 0.5), decay: 0.5)
        case 73: return Hit(frames: guiro(&noise, strokes: 6, length: 0.12), decay: 0.12)
        case 74: return Hit(frames: guiro(&noise, strokes: 18, length: 0.4), decay: 0.4)
        case 75: return Hit(frames: tone(2500, 0.08, decay: 0.02), decay: 0.08, pan: 200)
        case 76:
            return Hit(
                frames: mix(tone(1200, 0.1, decay: 0.025), filtered(&noise, .bandPass, 1200, q: 4, 0.05, decay: 0.01)),
                decay: 0.1, pan: -200)
        case 77:
            return Hit(
                frames: mix(tone(800, 0.1, decay: 0.03), filtered(&noise, .bandPass, 800, q: 4, 0.05, decay: 0.01)),
                decay: 0.1, pan: -200)
        case 78: return Hit(frames: cuica(from: 600, to: 420, length: 0.12), decay: 0.12)
        case 79: return Hit(frames: cuica(from: 500, to: 900, length: 0.3), decay: 0.3)
        case 80:
            return Hit(
                frames: metal([2850, 5300, 7900], length: 0.15, decay: 0.04, noise: &noise, square: false), decay: 0.15,
                pan: 250)
        default: return ringing([2850, 5300, 7900], square: false, decay: 1.4, pan: 250)
        }
    }

    // MARK: Building blocks

    private func count(_ seconds: Double) -> Int { Int(seconds * rate) }

    private func tone(_ frequency: Double, _ length: Double, decay: Double) -> [Double] {
        (0..<count(length)).map { i in
            let t = Double(i) / rate
            return sin(2 * Double.pi * frequency * t) * exp(-t / decay)
        }
    }

    private func sweep(from start: Double, to end: Double, time: Double, length: Double, decay: Double) -> [Double] {
        var phase = 0.0
        return (0..<count(length)).map { i in
            let t = Double(i) / rate
            let frequency = end + (start - end) * exp(-t / time)
            phase += 2 * Double.pi * frequency / rate
            return sin(phase) * exp(-t / decay)
        }
    }

    private func filtered(
        _ noise: inout NoiseSource, _ kind: Biquad.Kind, _ frequency: Double, q: Double, _ length: Double, decay: Double
    ) -> [Double] {
        var filter = Biquad(kind, frequency: frequency, q: q, sampleRate: rate)
        return (0..<count(length)).map { i in filter.process(noise.next()) * exp(-Double(i) / rate / decay) }
    }

    private func mix(_ a: [Double], _ b: [Double], _ gainB: Double = 1) -> [Double] {
        (0..<max(a.count, b.count)).map { i in (i < a.count ? a[i] : 0) + gainB * (i < b.count ? b[i] : 0) }
    }

    private func kick(start: Double, end: Double, length: Double, click: Double, noise: inout NoiseSource) -> [Double] {
        mix(
            sweep(from: start, to: end, time: 0.04, length: length, decay: length / 3),
            filtered(&noise, .lowPass, 3000, q: 0.7, 0.01, decay: 0.003), click)
    }

    private func snare(tone frequency: Double, noiseDecay: Double, length: Double, noise: inout NoiseSource) -> [Double]
    {
        mix(
            sweep(from: frequency * 1.4, to: frequency, time: 0.02, length: length, decay: 0.05),
            filtered(&noise, .bandPass, 3500, q: 0.5, length, decay: noiseDecay), 1.2)
    }

    private func clap(_ noise: inout NoiseSource) -> [Double] {
        let burst = filtered(&noise, .bandPass, 1200, q: 1.5, 0.25, decay: 0.06)
        return burst.enumerated().map { i, value in
            let t = Double(i) / rate
            let gate = t < 0.03 ? (Int(t / 0.01) % 2 == 0 ? 1.0 : 0.3) : 1.0
            return value * gate
        }
    }

    private func tom(_ frequency: Double, noise: inout NoiseSource) -> [Double] {
        mix(
            sweep(from: frequency * 1.5, to: frequency, time: 0.06, length: 0.5, decay: 0.18),
            filtered(&noise, .bandPass, frequency * 4, q: 1, 0.05, decay: 0.01), 0.4)
    }

    private func drumHead(
        _ frequency: Double, _ length: Double, sweep ratio: Double, noise: inout NoiseSource
    ) -> [Double] {
        mix(
            sweep(from: frequency * ratio, to: frequency, time: 0.02, length: length, decay: length / 3),
            filtered(&noise, .bandPass, frequency * 3, q: 2, 0.02, decay: 0.005), 0.5)
    }

    /// Square-wave clusters through a high-pass, the classic analogue recipe for metal.
    private func metal(
        _ frequencies: [Double], length: Double, decay: Double, noise: inout NoiseSource, square: Bool = true
    ) -> [Double] {
        var filter = Biquad(.highPass, frequency: frequencies.min() ?? 400, q: 0.7, sampleRate: rate)
        return (0..<count(length)).map { i in
            let t = Double(i) / rate
            var value = 0.0
            for frequency in frequencies {
                let s = sin(2 * Double.pi * frequency * t)
                value += square ? (s >= 0 ? 1 : -1) * 0.5 : s
            }
            return filter.process(value + 0.05 * noise.next()) * exp(-t / decay)
        }
    }

    private func hat(_ noise: inout NoiseSource, length: Double, decay: Double) -> [Double] {
        mix(
            filtered(&noise, .highPass, 8000, q: 0.7, length, decay: decay),
            metal([3140, 4180, 5620, 6970, 8100], length: length, decay: decay, noise: &noise), 0.3)
    }

    /// A cymbal: a short unlooped attack, then a loop of metallic noise that the volume envelope
    /// decays, which keeps long crashes small in the file.
    private func cymbal(
        _ noise: inout NoiseSource, bright: Double, attack: Double, decay: Double, exclusiveClass: Int = 0, pan: Int
    ) -> Hit {
        let loopLength = 8192
        let total = count(attack) + loopLength + 16
        var high = Biquad(.highPass, frequency: bright * 0.5, q: 0.7, sampleRate: rate)
        var band = Biquad(.bandPass, frequency: bright, q: 0.5, sampleRate: rate)
        let partials = [2960.0, 3870, 4710, 5530, 6420, 7380]
        let white = (0..<loopLength).map { _ in noise.next() }
        // Steady metallic noise whose loop wraps seamlessly: filter three periods, keep the last.
        var steady = [Double](repeating: 0, count: loopLength)
        for pass in 0..<3 {
            for i in 0..<loopLength {
                var metallic = 0.0
                for frequency in partials {
                    let cycles = (frequency * Double(loopLength) / rate).rounded()
                    metallic += sin(2 * Double.pi * cycles * Double(i) / Double(loopLength)) >= 0 ? 0.15 : -0.15
                }
                let value = band.process(high.process(white[i] + metallic))
                if pass == 2 { steady[i] = value }
            }
        }
        let attackFrames = count(attack)
        let frames = (0..<total).map { i -> Double in
            let body = steady[(i - attackFrames + loopLength * 4) % loopLength]
            let t = Double(i) / rate
            let accent = i < attackFrames ? 1 + 1.5 * (1 - t / attack) : 1
            return body * accent
        }
        return Hit(
            frames: frames, loop: attackFrames..<(attackFrames + loopLength), decay: decay,
            exclusiveClass: exclusiveClass, pan: pan)
    }

    /// A bell-like hit that rings for a long time: a short accented attack, then a loop of the
    /// same partials (rounded to whole cycles per loop) that the volume envelope decays.
    private func ringing(_ frequencies: [Double], square: Bool, decay: Double, pan: Int) -> Hit {
        let loopLength = 4096
        let attackFrames = count(0.03)
        var filter = Biquad(.highPass, frequency: (frequencies.min() ?? 400) * 0.8, q: 0.7, sampleRate: rate)
        var steady = [Double](repeating: 0, count: loopLength)
        for pass in 0..<3 {
            for i in 0..<loopLength {
                var value = 0.0
                for frequency in frequencies {
                    let cycles = (frequency * Double(loopLength) / rate).rounded()
                    let s = sin(2 * Double.pi * cycles * Double(i) / Double(loopLength))
                    value += square ? (s >= 0 ? 0.5 : -0.5) : s
                }
                let filtered = filter.process(value)
                if pass == 2 { steady[i] = filtered }
            }
        }
        let frames = (0..<(attackFrames + loopLength + 16)).map { i -> Double in
            let body = steady[(i - attackFrames + loopLength * 4) % loopLength]
            return i < attackFrames ? body * (1 + 1.5 * (1 - Double(i) / Double(attackFrames))) : body
        }
        return Hit(frames: frames, loop: attackFrames..<(attackFrames + loopLength), decay: decay, pan: pan)
    }

    private func rattle(_ noise: inout NoiseSource) -> [Double] {
        let base = filtered(&noise, .bandPass, 3000, q: 3, 0.8, decay: 0.25)
        return base.enumerated().map { i, value in value * (0.5 + 0.5 * sin(2 * Double.pi * 30 * Double(i) / rate)) }
    }

    private func whistle(length: Double) -> [Double] {
        var phase = 0.0
        return (0..<count(length)).map { i in
            let t = Double(i) / rate
            phase += 2 * Double.pi * (2600 + 60 * sin(2 * Double.pi * 25 * t)) / rate
            let envelope = min(1, t / 0.01) * min(1, (length - t) / 0.02)
            return sin(phase) * envelope
        }
    }

    private func guiro(_ noise: inout NoiseSource, strokes: Int, length: Double) -> [Double] {
        let base = filtered(&noise, .bandPass, 2500, q: 2, length, decay: length * 2)
        return base.enumerated().map { i, value in
            let position = Double(i) / rate / length * Double(strokes)
            return value * pow(1 - (position - position.rounded(.down)), 4)
        }
    }

    private func cuica(from start: Double, to end: Double, length: Double) -> [Double] {
        var phase = 0.0
        return (0..<count(length)).map { i in
            let t = Double(i) / rate
            phase += 2 * Double.pi * (start + (end - start) * t / length) / rate
            return sin(phase) * min(1, t / 0.005) * exp(-t / length)
        }
    }
}
