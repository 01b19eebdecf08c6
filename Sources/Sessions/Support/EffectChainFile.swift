import Effects
import FoundationEssentials
import MIDICore

#if canImport(Glibc)
    import Glibc
#endif

/// An effect chain given as data: a JSON array of objects such as `{"effect": "eq", "type":
/// "highShelf", "freq": 8000}`, one per effect in order; every other key is a parameter (numbers,
/// choices by name, booleans or "on"/"off").
public enum EffectChainFile {
    /// The chain in the file at `path`; the error names the file and the effect.
    public static func read(_ path: String) throws(EffectSpecError) -> [EffectSpec] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw EffectSpecError("\(path): cannot read the effect chain file")
        }
        let objects: [[String: Value]]
        do { objects = try JSONDecoder().decode([[String: Value]].self, from: data) } catch {
            throw EffectSpecError("\(path): an effect chain is a JSON array of objects with an \"effect\" name")
        }
        var specs: [EffectSpec] = []
        for (index, object) in objects.enumerated() {
            guard case .text(let name) = object["effect"] else {
                throw EffectSpecError("\(path): effect \(index + 1) has no \"effect\" name")
            }
            let pairs = object.filter { $0.key != "effect" }.sorted { $0.key < $1.key }.map { ($0.key, $0.value.text) }
            do { specs.append(try EffectSpec.make(name: name, pairs)) } catch {
                throw EffectSpecError("\(path): effect \(index + 1): \(error.description)")
            }
        }
        return specs
    }

    /// A parameter's value as the file has it.
    enum Value: Decodable {
        case text(String)
        case number(Double)
        case flag(Bool)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        /// As the command line would give it.
        var text: String {
            switch self {
            case .text(let text): return text
            case .number(let number): return EffectSpec.format(number)
            case .flag(let flag): return flag ? "on" : "off"
            }
        }
    }
}
