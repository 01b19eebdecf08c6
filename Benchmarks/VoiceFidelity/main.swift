// The native engine's fidelity sweep: every preset of each font, keys and velocities, each note
// rendered by both engines (reverb and chorus off) and compared as issue 44 asks: level within
// 1 dB, 50 ms envelope correlation ≥ 0.99, spectral centroid within 5 %, time to −60 dB after
// the release within 10 %. Prints the pass counts and the worst notes per measure; `--json FILE`
// writes every note's figures. Run it with scripts/voice-fidelity (which installs the fonts).

import Foundation
import Sampler
import SoundFontFiles
import TestSupport
import VoiceComparison
import VoiceEngine

struct Options {
    var fonts: [String] = []
    var keys = [36, 60, 84]
    var velocities = [40, 110]
    var limit = Int.max
    var worst = 3
    var json: String?
    /// "BANK:PROGRAM:KEY:VELOCITY": print that note's levels around its release, 5 ms apart.
    var trace: String?
    /// Only these presets ("BANK:PROGRAM,…"), or all.
    var only: Set<String>?
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 0
    func value() -> String {
        index += 1
        guard index < arguments.count else {
            FileHandle.standardError.write(Data("voice-fidelity: \(arguments[index - 1]) needs a value\n".utf8))
            exit(64)
        }
        return arguments[index]
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--keys": options.keys = value().split(separator: ",").compactMap { Int($0) }
        case "--velocities": options.velocities = value().split(separator: ",").compactMap { Int($0) }
        case "--limit": options.limit = Int(value()) ?? Int.max
        case "--worst": options.worst = Int(value()) ?? 3
        case "--json": options.json = value()
        case "--trace": options.trace = value()
        case "--only": options.only = Set(value().split(separator: ",").map(String.init))
        case "--help", "-h":
            print(
                """
                usage: voice-fidelity [--keys 36,60,84] [--velocities 40,110] [--limit PRESETS] [--worst N]
                                      [--json FILE] [--trace BANK:PROGRAM:KEY:VELOCITY]
                                      [--only BANK:PROGRAM,...] FONT...
                """)
            exit(0)
        default: options.fonts.append(arguments[index])
        }
        index += 1
    }
    return options
}

/// One note's comparison.
struct Note: Codable {
    var font: String
    var preset: String
    var bank: Int
    var program: Int
    var key: Int
    var velocity: Int
    var levelDifference: Double
    var envelopeCorrelation: Double
    var centroidRatio: Double?
    var decayRatio: Double?
    var decaySeconds: Double?
    var referenceDecaySeconds: Double?

    var passesLevel: Bool { abs(levelDifference) <= 1 }
    var passesEnvelope: Bool { envelopeCorrelation >= 0.99 }
    var passesCentroid: Bool { centroidRatio.map { abs($0 - 1) <= 0.05 } ?? true }
    var passesDecay: Bool {
        if let decayRatio { return abs(decayRatio - 1) <= 0.1 }
        // One reaches −60 dB and the other not: a failure unless the one that did came late.
        if let seconds = decaySeconds ?? referenceDecaySeconds { return seconds > 3.5 }
        return true
    }
    var label: String { "\(preset) (\(bank):\(program)) key \(key) vel \(velocity)" }
}

func run(_ options: Options) {
    guard !options.fonts.isEmpty else {
        FileHandle.standardError.write(Data("voice-fidelity: give one or more SoundFonts (see --help)\n".utf8))
        exit(64)
    }
    // Held for a second, released on a 64-frame boundary, where FluidSynth applies it too.
    let hold = 44_096
    let frames = 5 * 44_100
    var all: [Note] = []
    for font in options.fonts {
        let started = Date()
        let bank: SoundFontBank
        let synthesizer = VoiceSynthesizer()
        let sampler: SamplerNode
        do {
            bank = try SoundFontBank(contentsOf: font)
            try synthesizer.load(bank)
            sampler = try fluidSynthSampler(font: font)
        } catch {
            FileHandle.standardError.write(Data("voice-fidelity: \(error)\n".utf8))
            exit(1)
        }
        var notes: [Note] = []
        for preset in bank.presets.prefix(options.limit)
        where options.only?.contains("\(preset.bank):\(preset.program)") ?? true {
            // Percussion plays on channel 10, whose bank is 128 in both engines.
            let channel = preset.bank == 128 ? 9 : 0
            let bankSelect = preset.bank == 128 ? 0 : preset.bank
            for key in options.keys {
                for velocity in options.velocities {
                    // A fresh FluidSynth for each note: its system reset leaves some earlier
                    // notes' voices sounding (the sweep saw them in the next presets' releases).
                    guard let fresh = try? fluidSynthSampler(sharingFontsOf: sampler) else {
                        FileHandle.standardError.write(Data("voice-fidelity: FluidSynth refused a sampler\n".utf8))
                        exit(1)
                    }
                    let theirs = fluidSynthNote(
                        sampler: fresh, program: preset.program, bank: bankSelect, channel: channel, key: key,
                        velocity: velocity, holdFrames: hold, frames: frames)
                    let ours = nativeNote(
                        synthesizer: synthesizer, program: preset.program, bank: bankSelect, channel: channel, key: key,
                        velocity: velocity, holdFrames: hold, frames: frames)
                    let nonFinite = (ours.0 + ours.1).filter { !$0.isFinite }.count
                    if nonFinite > 0 {
                        print(
                            "  not finite: \(nonFinite) samples of \(preset.name) (\(preset.bank):\(preset.program)) "
                                + "key \(key) vel \(velocity)")
                    }
                    let reference = zip(theirs.0, theirs.1).map { ($0 + $1) / 2 }
                    let mine = zip(ours.0, ours.1).map { ($0 + $1) / 2 }
                    if options.trace == "\(preset.bank):\(preset.program):\(key):\(velocity)" {
                        for start in stride(from: hold - 2205, to: hold + 22050, by: 220) {
                            let levels = [mine, reference].map { rmsDecibels(Array($0[start..<(start + 220)])) }
                            print(
                                String(
                                    format: "%7.3f s  ours %7.1f dB  FluidSynth %7.1f dB", Double(start) / 44_100,
                                    levels[0], levels[1]))
                        }
                    }
                    // A key outside every zone of the preset: silence from both is agreement.
                    if rmsDecibels(reference) < -100 && rmsDecibels(mine) < -100 { continue }
                    let held = { (signal: [Float]) in Array(signal.prefix(hold)) }
                    let centroids = (spectralCentroid(held(mine)), spectralCentroid(held(reference)))
                    let decays = (
                        decaySeconds(mine, releaseFrame: hold), decaySeconds(reference, releaseFrame: hold)
                    )
                    notes.append(
                        Note(
                            font: (font as NSString).lastPathComponent, preset: preset.name, bank: preset.bank,
                            program: preset.program, key: key, velocity: velocity,
                            levelDifference: rmsDecibels(ours.0 + ours.1) - rmsDecibels(theirs.0 + theirs.1),
                            envelopeCorrelation: correlation(envelope(mine), envelope(reference)),
                            centroidRatio: centroids.0.flatMap { a in centroids.1.map { a / $0 } },
                            decayRatio: decays.0.flatMap { a in decays.1.flatMap { $0 > 0 ? a / $0 : nil } },
                            decaySeconds: decays.0, referenceDecaySeconds: decays.1))
                }
            }
        }
        let name = (font as NSString).lastPathComponent
        let seconds = Date().timeIntervalSince(started)
        print("\(name): \(bank.presets.prefix(options.limit).count) presets, \(notes.count) notes in \(Int(seconds)) s")
        func report(_ title: String, _ passes: (Note) -> Bool, _ badness: (Note) -> Double, _ show: (Note) -> String) {
            let failing = notes.filter { !passes($0) }
            print("  \(title): \(notes.count - failing.count) of \(notes.count) pass; the worst:")
            // The worst notes, passing or not (a failing one is marked).
            for note in notes.sorted(by: { badness($0) > badness($1) }).prefix(options.worst) {
                print("    \(passes(note) ? " " : "✗") \(show(note))  \(note.label)")
            }
        }
        report("level within 1 dB", \.passesLevel, { abs($0.levelDifference) }) {
            String(format: "%+6.3f dB", $0.levelDifference)
        }
        report("envelope correlation >= 0.99", \.passesEnvelope, { 1 - $0.envelopeCorrelation }) {
            String(format: "%7.5f", $0.envelopeCorrelation)
        }
        report("spectral centroid within 5 %", \.passesCentroid, { abs(($0.centroidRatio ?? 1) - 1) }) {
            String(format: "%+6.2f %%", (($0.centroidRatio ?? 1) - 1) * 100)
        }
        report(
            "time to -60 dB after release within 10 %", \.passesDecay,
            { $0.decayRatio.map { abs($0 - 1) } ?? ($0.passesDecay ? 0 : 1) }
        ) {
            "\($0.decaySeconds.map { String(format: "%.3f", $0) } ?? "-") s vs "
                + "\($0.referenceDecaySeconds.map { String(format: "%.3f", $0) } ?? "-") s"
        }
        all += notes
    }
    if let json = options.json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do { try encoder.encode(all).write(to: URL(fileURLWithPath: json)) } catch {
            FileHandle.standardError.write(Data("voice-fidelity: cannot write \(json): \(error)\n".utf8))
            exit(1)
        }
    }
    let failing = all.filter { !($0.passesLevel && $0.passesEnvelope && $0.passesCentroid && $0.passesDecay) }
    print("all fonts: \(all.count - failing.count) of \(all.count) notes pass every measure")
}

run(parse(Array(CommandLine.arguments.dropFirst())))
