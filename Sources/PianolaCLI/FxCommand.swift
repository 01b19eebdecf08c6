import ArgumentParser
import Pianola

struct FxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fx", abstract: "The effects for --fx and their parameters.",
        subcommands: [FxListCommand.self], defaultSubcommand: FxListCommand.self)
}

struct FxListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every effect with its parameters: key, range, default and unit.",
        discussion: """
            Use them as --fx NAME:key=value,... on render, play, live and process, in order. \
            Several `--fx eq:` in a row make one multi-band EQ (or give band=N).
            """)

    @Flag(help: "Print JSON.")
    var json = false

    func run() {
        if json {
            let entries = EffectSpec.catalog.map { effect in
                JSONValue.object([
                    "name": .string(effect.name), "summary": .string(effect.summary),
                    "parameters": .array(effect.parameters.map(Self.json)),
                ])
            }
            print(JSONValue.array(entries).serialized())
            return
        }
        // In 80 columns: a long summary or list of choices goes on under its own start.
        for effect in EffectSpec.catalog {
            let name = "\(effect.name): "
            for line in wrapped(effect.summary, after: name, indent: name.count) { print(line) }
            // Keys in a column as wide as the longest (`expansionThreshold`) and two spaces.
            let width = (effect.parameters.map(\.identifier.count).max() ?? 0) + 2
            for parameter in effect.parameters {
                let key = "  " + fitted(parameter.identifier, width: width)
                let text = "\(parameter.name): \(Self.values(of: parameter))"
                for line in wrapped(text, after: key, indent: key.count) { print(line) }
            }
        }
    }

    static func json(_ parameter: EffectParameter) -> JSONValue {
        var fields: [String: JSONValue] = [
            "key": .string(parameter.identifier), "description": .string(parameter.name),
            "default": .number(parameter.defaultValue), "unit": .string(parameter.unit.rawValue),
            "min": .number(parameter.range.lowerBound), "max": .number(parameter.range.upperBound),
        ]
        if !parameter.choices.isEmpty { fields["choices"] = .array(parameter.choices.map(JSONValue.string)) }
        return .object(fields)
    }

    /// "10…22050 Hz, default 1000", "on|off, default off" or the choices.
    static func values(of parameter: EffectParameter) -> String {
        if !parameter.choices.isEmpty {
            return parameter.choices.joined(separator: "|")
                + ", default \(parameter.choices[Int(parameter.defaultValue)])"
        }
        if parameter.unit == .boolean { return "on|off, default \(parameter.defaultValue == 1 ? "on" : "off")" }
        let unit = parameter.unit.rawValue.isEmpty ? "" : " \(parameter.unit.rawValue)"
        let range = "\(EffectSpec.format(parameter.range.lowerBound))…\(EffectSpec.format(parameter.range.upperBound))"
        // (A default derived from another, q's from bw's, to three decimals; the JSON has it whole.)
        return "\(range)\(unit), default \(EffectSpec.format((parameter.defaultValue * 1_000).rounded() / 1_000))"
    }
}
