#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The library of tones the General MIDI presets draw from. Each tone is rendered once per key
/// zone and shared by every preset that uses it.
enum Tones {
    static let all: [Tone] = [
        Tone(
            name: "piano",
            spectrum: { _ in Spectrum.harmonics(48) { 1 / pow(Double($0), 1.35) * (1 + 0.35 * sin(Double($0))) } },
            transient: .noise(centre: 2200, absolute: true, q: 0.7, duration: 0.03, level: 0.5)),
        Tone(
            name: "epiano", spectrum: { _ in Synthesis.fmPartials(ratio: 1, index: 1.1) },
            transient: .partials([(14, 1), (15, 0.4)], duration: 0.05, level: 0.35)),
        Tone(
            name: "fmpiano", spectrum: { _ in Synthesis.fmPartials(ratio: 1, index: 2.4) },
            transient: .partials([(9, 1), (17, 0.5)], duration: 0.06, level: 0.4)),
        Tone(
            name: "harpsi", spectrum: { _ in Spectrum.pulse(width: 0.2, rolloff: 0.7) },
            transient: .noise(centre: 5, absolute: false, q: 1, duration: 0.015, level: 0.6)),
        Tone(
            name: "clav", spectrum: { _ in Spectrum.pulse(width: 0.15, rolloff: 0.8) },
            transient: .noise(centre: 4, absolute: false, q: 1, duration: 0.01, level: 0.5)),
        Tone(
            name: "celesta", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.2), (3.99, 0.15), (8.1, 0.05)]) },
            transient: .partials([(6.1, 1)], duration: 0.03, level: 0.4), loopLength: 4096),
        Tone(
            name: "glock", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2.76, 0.45), (5.4, 0.25), (8.93, 0.1)]) },
            loopLength: 4096),
        Tone(
            name: "marimba", spectrum: { _ in Spectrum.inharmonic([(1, 1), (4, 0.12), (9.9, 0.03)]) },
            transient: .partials([(4, 1), (10, 0.5)], duration: 0.04, level: 0.6), loopLength: 4096),
        Tone(
            name: "xylo", spectrum: { _ in Spectrum.inharmonic([(1, 1), (3, 0.3), (6, 0.1)]) },
            transient: .noise(centre: 3, absolute: false, q: 2, duration: 0.02, level: 0.5), loopLength: 4096),
        Tone(
            name: "tubebell",
            spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.6), (3, 0.3), (4.2, 0.4), (5.4, 0.25), (6.8, 0.15)]) },
            transient: .partials([(9.3, 1), (11.2, 0.6)], duration: 0.08, level: 0.3), loopLength: 4096),
        Tone(
            name: "drawbar",
            spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.8), (3, 0.55), (4, 0.5), (6, 0.3), (8, 0.3)]) }),
        Tone(
            name: "percorg",
            spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.7), (4, 0.4), (8, 0.2)]) },
            transient: .partials([(3, 1)], duration: 0.12, level: 0.8)),
        Tone(name: "rockorg", spectrum: { _ in Spectrum.harmonics(24) { 1 / pow(Double($0), 0.6) } }),
        Tone(
            name: "pipeorg",
            spectrum: { _ in Spectrum.harmonics(20) { ($0 % 2 == 1 ? 1 : 0.6) / pow(Double($0), 1.1) } },
            transient: .noise(centre: 4, absolute: false, q: 2, duration: 0.06, level: 0.25)),
        Tone(name: "reedorg", spectrum: { _ in Spectrum.pulse(width: 0.3, rolloff: 1.1) }, loopNoise: 0.03),
        Tone(name: "accordion", spectrum: { _ in Spectrum.pulse(width: 0.22, rolloff: 0.95) }, loopNoise: 0.04),
        Tone(
            name: "harmonica",
            spectrum: { root in
                Spectrum.formant(root: root, rolloff: 0.9, formants: [(1200, 500, 1.5), (2500, 600, 0.6)])
            },
            loopNoise: 0.08),
        Tone(
            name: "nylon",
            spectrum: { _ in Spectrum.harmonics(40) { abs(sin(Double.pi * Double($0) * 0.2)) / pow(Double($0), 1.5) } },
            transient: .noise(centre: 3, absolute: false, q: 1, duration: 0.012, level: 0.4)),
        Tone(
            name: "steel",
            spectrum: { _ in Spectrum.harmonics(48) { abs(sin(Double.pi * Double($0) * 0.12)) / pow(Double($0), 1.05) }
            },
            transient: .noise(centre: 6, absolute: false, q: 1, duration: 0.012, level: 0.5)),
        Tone(
            name: "overdrive",
            spectrum: { _ in Spectrum.harmonics { ($0 % 2 == 1 ? 1.0 : 0.55) / pow(Double($0), 0.75) } }),
        Tone(
            name: "bass", spectrum: { _ in Spectrum.harmonics(32) { 1 / pow(Double($0), 1.7) } },
            transient: .noise(centre: 5, absolute: false, q: 1, duration: 0.015, level: 0.3)),
        Tone(
            name: "slap", spectrum: { _ in Spectrum.harmonics(40) { 1 / pow(Double($0), 1.1) } },
            transient: .noise(centre: 1800, absolute: true, q: 1.5, duration: 0.025, level: 0.9)),
        Tone(name: "saw", spectrum: { _ in Spectrum.saw() }),
        Tone(name: "square", spectrum: { _ in Spectrum.square() }),
        Tone(name: "pulse", spectrum: { _ in Spectrum.pulse(width: 0.25) }),
        Tone(name: "triangle", spectrum: { _ in Spectrum.triangle() }),
        Tone(name: "sine", spectrum: { _ in [Partial(ratio: 1, amplitude: 1), Partial(ratio: 2, amplitude: 0.05)] }),
        Tone(
            name: "strings",
            spectrum: { root in
                Spectrum.formant(root: root, rolloff: 0.95, formants: [(450, 250, 1), (2800, 900, 0.5)])
            },
            loopNoise: 0.02, loopNoiseCentre: 6),
        Tone(
            name: "aah",
            spectrum: { root in
                Spectrum.formant(
                    root: root, rolloff: 0.6, formants: [(730, 90, 2), (1090, 110, 1.2), (2440, 160, 0.6)])
            }, loopNoise: 0.02),
        Tone(
            name: "ooh",
            spectrum: { root in
                Spectrum.formant(root: root, rolloff: 1.2, formants: [(300, 70, 2), (870, 90, 0.8), (2240, 150, 0.2)])
            }),
        Tone(
            name: "brass",
            spectrum: { root in Spectrum.formant(root: root, rolloff: 0.85, formants: [(1200, 600, 1.2)]) }),
        Tone(
            name: "sax",
            spectrum: { root in
                Spectrum.formant(root: root, rolloff: 0.9, formants: [(1500, 700, 1), (3000, 800, 0.4)])
            },
            loopNoise: 0.04),
        Tone(
            name: "doublereed",
            spectrum: { root in
                Spectrum.formant(root: root, rolloff: 0.5, formants: [(1100, 250, 2), (2800, 500, 0.5)])
            },
            loopNoise: 0.02),
        Tone(
            name: "clarinet",
            spectrum: { _ in Spectrum.harmonics(40) { $0 % 2 == 1 ? 1 / Double($0) : 0.06 / Double($0) } },
            loopNoise: 0.02),
        Tone(
            name: "flute", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.22), (3, 0.08), (4, 0.03)]) },
            loopNoise: 0.07, loopNoiseCentre: 2,
            transient: .noise(centre: 3, absolute: false, q: 1.5, duration: 0.05, level: 0.3)),
        Tone(
            name: "panflute", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.1), (3, 0.05)]) },
            loopNoise: 0.18, loopNoiseCentre: 1.5,
            transient: .noise(centre: 2, absolute: false, q: 1, duration: 0.07, level: 0.6)),
        Tone(
            name: "chiff", spectrum: { _ in Spectrum.square(rolloff: 1.3) },
            transient: .noise(centre: 3, absolute: false, q: 1, duration: 0.05, level: 0.8)),
        Tone(
            name: "metalpad",
            spectrum: { _ in
                Spectrum.inharmonic([(1, 1), (1.5, 0.4), (2.01, 0.5), (2.76, 0.3), (3.5, 0.2), (5.4, 0.1)])
            },
            loopLength: 4096),
        Tone(
            name: "sitar",
            spectrum: { _ in Spectrum.harmonics { 1 / pow(Double($0), 0.55) * (1 + 0.5 * sin(Double($0) * 0.7)) } },
            transient: .noise(centre: 8, absolute: false, q: 1, duration: 0.02, level: 0.5)),
        Tone(
            name: "kalimba", spectrum: { _ in Spectrum.inharmonic([(1, 1), (5.9, 0.15)]) },
            transient: .partials([(5.9, 1), (11, 0.4)], duration: 0.03, level: 0.6), loopLength: 4096),
        Tone(
            name: "steeldrum", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2, 0.5), (3, 0.25), (4.1, 0.15)]) },
            transient: .partials([(5.2, 1)], duration: 0.04, level: 0.4), loopLength: 4096),
        Tone(
            name: "wood", spectrum: { _ in Spectrum.inharmonic([(1, 1), (2.7, 0.3)]) },
            transient: .noise(centre: 2.5, absolute: false, q: 3, duration: 0.02, level: 0.8), loopLength: 4096),
        Tone(
            name: "drum", spectrum: { _ in Spectrum.inharmonic([(1, 1), (1.59, 0.3), (2.14, 0.15)]) },
            transient: .noise(centre: 1500, absolute: true, q: 0.7, duration: 0.04, level: 0.8), loopLength: 4096),
        Tone(name: "noise", spectrum: { _ in [] }, loopNoise: 1, loopNoiseCentre: 8, loopLength: 4096),
        Tone(name: "darknoise", spectrum: { _ in [] }, loopNoise: 1, loopNoiseCentre: 2, loopLength: 4096),
    ]

    static func index(_ name: String) -> Int {
        guard let index = all.firstIndex(where: { $0.name == name }) else {
            preconditionFailure("unknown tone \(name)")  // a programming error in the preset table
        }
        return index
    }
}
