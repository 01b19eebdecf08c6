import AudioFiles

/// One line of a batch manifest, decoded and checked: every key known, every value of its type
/// and range. A line that is not valid throws a `Problem` saying why.
struct ManifestLine: Decodable {
    var input: String
    var output: String
    var soundFont: String?
    var sampleRate: Double?
    var encoding: AudioFile.Encoding?
    var gainDecibels: Double?
    var tail: RenderOptions.Tail?
    var loudness: Double?
    var truePeak: Double?
    var engine: SynthesisEngine?

    /// Why a line is not a job (with its paths, when it had them).
    struct Problem: Error {
        var reason: String
        var input: String?
        var output: String?
    }

    /// The keys a line may have.
    static let keys: Set<String> = [
        "input", "output", "soundfont", "rate", "format", "gain", "tail", "loudness", "truePeak", "engine",
    ]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container: KeyedDecodingContainer<Key>
        do { container = try decoder.container(keyedBy: Key.self) } catch {
            throw Problem(reason: "not a JSON object")
        }
        let input = try? container.decodeIfPresent(String.self, forKey: Key(stringValue: "input"))
        let output = try? container.decodeIfPresent(String.self, forKey: Key(stringValue: "output"))
        guard let input, !input.isEmpty, let output, !output.isEmpty else {
            throw Problem(reason: "needs \"input\" and \"output\" strings", input: input, output: output)
        }
        func problem(_ reason: String) -> Problem { Problem(reason: reason, input: input, output: output) }
        if let unknown = container.allKeys.map(\.stringValue).filter({ !Self.keys.contains($0) }).sorted().first {
            throw problem("unknown key \"\(unknown)\" (keys: \(Self.keys.sorted().joined(separator: ", ")))")
        }
        func value<T: Decodable>(_ key: String, _ type: T.Type, _ kind: String) throws -> T? {
            do { return try container.decodeIfPresent(type, forKey: Key(stringValue: key)) } catch {
                throw problem("\"\(key)\" must be \(kind)")
            }
        }
        self.input = input
        self.output = output
        soundFont = try value("soundfont", String.self, "a path")
        sampleRate = try value("rate", Double.self, "a number of Hz")
        gainDecibels = try value("gain", Double.self, "a number of dB")
        loudness = try value("loudness", Double.self, "a number of LUFS")
        truePeak = try value("truePeak", Double.self, "a number of dBTP")
        if let format = try value("format", String.self, "s16, s24 or f32") {
            guard let encoding = AudioFile.Encoding(rawValue: format) else {
                throw problem("format '\(format)' is not s16, s24 or f32")
            }
            self.encoding = encoding
        }
        let engineNames = SynthesisEngine.allCases.map(\.rawValue).joined(separator: " or ")
        if let name = try value("engine", String.self, engineNames) {
            guard let engine = SynthesisEngine(rawValue: name) else {
                throw problem("engine '\(name)' is not \(engineNames)")
            }
            self.engine = engine
        }
        // The tail: "auto", or seconds as a number or a string.
        let tailText: String?
        if let seconds = try? container.decodeIfPresent(Double.self, forKey: Key(stringValue: "tail")) {
            tailText = "\(seconds)"
        } else {
            tailText = try value("tail", String.self, "auto or a number of seconds")
        }
        if let tailText {
            guard let tail = RenderOptions.Tail(tailText) else {
                throw problem("tail '\(tailText)' is not auto or 0…600 seconds")
            }
            self.tail = tail
        }
    }
}
