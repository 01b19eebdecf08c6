import ArgumentParser
import Pianola

/// An option whose value is one of a few words. Parsed with `parser(for:)`, a bad value is one
/// line in the house style: "--stems must be track, channel or program, got 'x'".
protocol ArgumentChoice: ExpressibleByArgument, CaseIterable, RawRepresentable<String> {}

extension ArgumentChoice {
    /// The words, as a sentence lists them: "a, b or c".
    static var choices: String {
        let words = allCases.map(\.rawValue)
        guard let last = words.last, words.count > 1 else { return words.joined() }
        return words.dropLast().joined(separator: ", ") + " or " + last
    }

    /// The words, for shell completion.
    static var completion: CompletionKind { .list(allCases.map(\.rawValue)) }

    /// A parser for `option` (its name, for the message).
    static func parser(for option: String) -> @Sendable (String) throws -> Self {
        { text in
            guard let value = Self(rawValue: text) else {
                throw ValidationError("\(option) must be \(choices), got '\(text)'")
            }
            return value
        }
    }
}

extension AudioFile.Encoding: ArgumentChoice {}
extension StemMode: ArgumentChoice {}
extension RenderTiming: ArgumentChoice {}

/// An on/off switch (`--synth-reverb off`).
enum Switch: String, ArgumentChoice {
    case on, off
    var isOn: Bool { self == .on }
}
