import Pianola
import SoundFontFiles

/// What the native voice engine's reader finds in a font, for `pianola soundfont --presets`:
/// whether it reads the font, how many presets, instruments and samples it holds, the samples
/// that do not play and the presets that play silence.
struct NativeFontReport {
    var bank: SoundFontBank
    /// Why each sample that does not play does not, by sample index.
    var sampleProblems: [Int: String]
    var silentPresets: [SilentPreset]

    /// Reads the font at `path` and every sample's state; the reader's refusal, one line naming
    /// the file and the first problem, is the error.
    init(path: String) throws(CLIError) {
        do throws(SoundFontReadError) {
            bank = try SoundFontBank(contentsOf: path)
        } catch {
            throw CLIError(error.description)
        }
        let problems = bank.sampleProblems()
        sampleProblems = [:]
        for (index, problem) in problems.enumerated() { if let problem { sampleProblems[index] = problem } }
        silentPresets = bank.silentPresets(sampleProblems: problems)
    }

    /// "Native engine: reads it (N presets, M instruments, K samples, SF3 samples decodable)", or
    /// with "J do not play (first: PROBLEM)" in place of the last part when some do not.
    var summary: String {
        var parts = [
            count(bank.presets.count, "preset"), count(bank.instruments.count, "instrument"),
            count(bank.samples.count, "sample"),
        ]
        if let first = sampleProblems.keys.min() {
            parts.append("\(sampleProblems.count) of them do not play (first: \(sampleProblems[first]!))")
        } else if bank.majorVersion == 3 {
            parts.append("SF3 samples decodable")
        }
        return "Native engine: reads it (" + parts.joined(separator: ", ") + ")"
    }

    /// One line per silent preset: "Native engine warning: preset BBB:PPP NAME plays silence: REASON".
    var warnings: [String] {
        silentPresets.map { silent in
            let preset = bank.presets[silent.index]
            return "Native engine warning: preset \(Self.format3(preset.bank)):\(Self.format3(preset.program)) "
                + "\(printableName(preset.name)) plays silence: \(silent.reason)"
        }
    }

    /// The report as JSON: version, counts, the samples that do not play and the silent presets.
    var json: JSONValue {
        .object([
            "version": .number(Double(bank.majorVersion)),
            "presets": .number(Double(bank.presets.count)),
            "instruments": .number(Double(bank.instruments.count)),
            "samples": .number(Double(bank.samples.count)),
            "unplayableSamples": .array(
                sampleProblems.keys.sorted().map { index in
                    .object([
                        "index": .number(Double(index)), "name": .string(bank.samples[index].name),
                        "problem": .string(sampleProblems[index]!),
                    ])
                }),
            "silentPresets": .array(
                silentPresets.map { silent in
                    let preset = bank.presets[silent.index]
                    return .object([
                        "bank": .number(Double(preset.bank)), "program": .number(Double(preset.program)),
                        "name": .string(preset.name), "reason": .string(silent.reason),
                    ])
                }),
        ])
    }

    private func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }

    private func printableName(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? "?" : $0 }))
    }

    static func format3(_ value: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }
}
