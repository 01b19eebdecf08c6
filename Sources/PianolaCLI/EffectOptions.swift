import ArgumentParser
import Pianola

/// `--fx` and `--fx-chain`, shared by render, play, live and process.
struct EffectOptions: ParsableArguments {
    @Option(
        name: .customLong("fx"),
        help: ArgumentHelp(
            "An effect, in order (repeatable): NAME[:key=value,...], e.g. eq:type=highShelf,freq=8000,gain=-6 or filter:type=lowPass,freq=1000,q=0.707; see `pianola fx list`.",
            valueName: "effect"),
        completion: .list(EffectSpec.catalog.map(\.name)))
    var effects: [String] = []

    @Option(
        name: .customLong("fx-chain"),
        help: ArgumentHelp(
            "Effects from a JSON file: an array of objects like {\"effect\": \"eq\", \"type\": \"highShelf\", \"freq\": 8000}, applied before any --fx.",
            valueName: "file.json"),
        completion: .file(extensions: ["json"]))
    var chainFile: String?

    /// The chain: the file's effects, then the --fx ones; one clear line on the first bad one.
    func specs() throws(EffectSpecError) -> [EffectSpec] {
        var specs = try chainFile.map(EffectChainFile.read) ?? []
        for text in effects {
            do { specs.append(try EffectSpec.parse(text)) } catch {
                throw EffectSpecError("--fx \(text): \(error.description)")
            }
        }
        return specs
    }
}
