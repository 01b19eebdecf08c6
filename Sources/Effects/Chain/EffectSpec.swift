#if canImport(Glibc)
    import Glibc
#endif

/// One effect of a chain as the command line and chain files give it: a name and parameter values
/// (`eq:type=highShelf,freq=8000,gain=-6`). Values are checked against the effect's parameter table.
public struct EffectSpec: Hashable, Sendable {
    /// The effect's name, one of `catalog`'s (`eq`, `filter`, `reverb`, `limiter`, `compressor`, `delay`, `distortion`, `varispeed`, `timepitch`).
    public var name: String
    /// Values by parameter key; choices are stored as their index, booleans as 0 or 1. A `delay`'s
    /// note value (`time=1/8`) is stored under `note`, as a fraction of a whole note.
    public var values: [String: Double]

    /// A spec of effect `name` with `values` by parameter key, taken as given. Unlike `parse(_:)` and
    /// `make(name:_:)` it checks neither the name nor the values here: `EffectChain` does when it makes
    /// the nodes, and throws an `EffectSpecError` for an unknown name, or for a value that is not a
    /// number or lies outside its parameter's range (a choice's index, an `eq` band number).
    public init(name: String, values: [String: Double] = [:]) {
        self.name = name
        self.values = values
    }

    /// Every effect, with its parameter table.
    public static let catalog: [EffectDescription] = [
        EffectDescription(
            name: "eq",
            summary: "equalizer band (several `eq` in a row, or band=N, make one multi-band EQ)",
            parameters: EQNode.bandParameters + [
                EffectDescription.q,
                EffectParameter("band", "band number in the EQ", range: 1...16, default: 1, unit: .number),
                EffectParameter("global", "global gain of the EQ", range: -96...24, default: 0, unit: .decibels),
                EffectDescription.matched,
            ]),
        EffectDescription(
            name: "filter", summary: "one filter band (default: low-pass)",
            parameters: FilterNode.parameters + [EffectDescription.q, EffectDescription.matched]),
        EffectDescription(
            name: "reverb",
            summary: "room, hall, chamber, plate and cathedral reverb (a 16-line feedback delay network)",
            parameters: ReverbNode.parameters),
        EffectDescription(
            name: "limiter", summary: "look-ahead peak limiter with a ceiling and a true-peak mode",
            parameters: LimiterNode.parameters),
        EffectDescription(
            name: "compressor",
            summary: "compressor and expander: soft knee, look-ahead, peak or RMS detection",
            parameters: DynamicsProcessorNode.parameters),
        EffectDescription(
            name: "delay", summary: "echo with feedback, a low-pass in the loop, and tempo-synced times",
            parameters: DelayNode.parameters),
        EffectDescription(
            name: "distortion",
            summary: "soft, hard, tube and fold-back curves (8x oversampled, anti-aliased), bitcrush, ring modulator",
            parameters: DistortionNode.parameters),
        EffectDescription(
            name: "varispeed", summary: "speed with the pitch following, as tape (a song plays faster and higher)",
            parameters: [
                EffectParameter(
                    "rate", "playback rate (2: an octave up, half the length)", range: 0.25...4, default: 1,
                    unit: .number),
                EffectParameter(
                    "cents", "the rate as a pitch shift, cents (multiplies rate)", range: -2400...2400,
                    default: 0, unit: .number),
            ]),
        EffectDescription(
            name: "timepitch", summary: "tempo and pitch apart, by SoundTouch (a song plays faster, or transposed)",
            parameters: [
                EffectParameter(
                    "rate", "tempo (2: half the length, the same pitch)", range: 0.03125...32, default: 1, unit: .number
                ),
                EffectParameter("pitch", "pitch shift, cents", range: -2400...2400, default: 0, unit: .number),
            ]),
    ]

    /// Parses `NAME[:key=value,...]`.
    public static func parse(_ text: String) throws(EffectSpecError) -> EffectSpec {
        let parts = text.split(separator: ":", maxSplits: 1)
        let name = parts.first.map(String.init) ?? ""
        var pairs: [(String, String)] = []
        if parts.count == 2 {
            for item in parts[1].split(separator: ",") {
                let keyValue = item.split(separator: "=", maxSplits: 1)
                guard keyValue.count == 2 else {
                    throw EffectSpecError("\(name): '\(item)' is not key=value")
                }
                pairs.append((String(keyValue[0]), String(keyValue[1])))
            }
        }
        return try make(name: name, pairs)
    }

    /// Builds a spec from key/value text pairs (the command line, or a chain file's object).
    public static func make(name: String, _ pairs: [(String, String)]) throws(EffectSpecError) -> EffectSpec {
        guard let effect = catalog.first(where: { $0.name == name }) else {
            throw EffectSpecError(
                "unknown effect '\(name)' (known: \(catalog.map(\.name).joined(separator: ", ")); \(EffectSpecError.catalogHint))"
            )
        }
        var spec = EffectSpec(name: name)
        var noteText = ""
        for (key, text) in pairs {
            guard let parameter = effect.parameters.first(where: { $0.identifier == key }) else {
                throw EffectSpecError(
                    "\(name): unknown parameter '\(key)' (\(name) takes \(effect.parameters.map(\.identifier).joined(separator: ", ")))"
                )
            }
            if name == "delay" && key == "time" && text.contains("/") {
                spec.values["note"] = try noteValue(text, of: name)
                noteText = text
                spec.values["time"] = nil
                continue
            }
            spec.values[key] = try value(text, for: parameter, of: name)
            if name == "delay" && key == "time" { spec.values["note"] = nil }
        }
        if name == "varispeed", !(0.25...4).contains(spec.varispeedRate) {
            throw EffectSpecError("varispeed: rate × 2^(cents/1200) is \(format(spec.varispeedRate)), outside 0.25…4")
        }
        if let note = spec.values["note"], let tempo = spec.values["tempo"], note * 240 / tempo > 2 {
            throw EffectSpecError(
                "delay: time=\(noteText) at \(format(tempo)) BPM is \(format((note * 24_000 / tempo).rounded() / 100)) s, more than 2 s"
            )
        }
        return spec
    }

    /// A note value as a fraction of a whole note: `1/8` is 0.125, dotted `1/8.` 0.1875, triplet
    /// `1/8t` 0.0833….
    static func noteValue(_ text: String, of effect: String) throws(EffectSpecError) -> Double {
        var body = Substring(text.lowercased())
        var factor = 1.0
        if body.hasSuffix(".") {
            factor = 1.5
            body = body.dropLast()
        } else if body.hasSuffix("t") {
            factor = 2.0 / 3
            body = body.dropLast()
        }
        let parts = body.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]),
            (1...64).contains(numerator), (1...256).contains(denominator)
        else {
            throw EffectSpecError(
                "\(effect): time=\(text) is not a note value (1/4, 1/8, dotted 1/8., triplet 1/8t) or seconds")
        }
        return Double(numerator) / Double(denominator) * factor
    }

    /// The seconds of a `delay` spec: its `time`, or its note value at its `tempo`, else at
    /// `songTempo`, else at the table's default `tempo` (a beat is a quarter note); at most 2 s (a
    /// note value too long at a song's tempo is held at 2 s; with `tempo` given, `make` refuses it).
    public func delaySeconds(songTempo: Double?) -> Double {
        guard let note = values["note"] else { return value(of: "time") }
        let tempo = values["tempo"] ?? songTempo ?? value(of: "tempo")
        return min(note * 4 * 60 / tempo, DelayNode.maximumDelayTime)
    }

    /// A `varispeed` spec's rate: `rate` × 2^(`cents`/1200).
    public var varispeedRate: Double { value(of: "rate") * pow(2, value(of: "cents") / 1_200) }

    /// Whether the spec changes the pace of what comes before it (`varispeed`, `timepitch`): the
    /// output is 1/`rateFactor` as long as the input.
    public var changesRate: Bool { name == "varispeed" || name == "timepitch" }

    /// How many times as fast as its input the spec plays what comes before it: a `varispeed`'s
    /// rate (with its cents), a `timepitch`'s rate; 1 for the other effects. A song played
    /// through the spec goes this many times as fast.
    public var rateFactor: Double {
        switch name {
        case "varispeed": varispeedRate
        case "timepitch": value(of: "rate")
        default: 1
        }
    }

    /// The product of the specs' `rateFactor`s: how many times as fast a song played through all of
    /// them goes.
    public static func rateFactor(of specs: [EffectSpec]) -> Double { specs.reduce(1) { $0 * $1.rateFactor } }

    /// Whether the spec is a `delay` timed by a note value at the song's tempo (no `tempo` of its own).
    public var followsSongTempo: Bool { name == "delay" && values["note"] != nil && values["tempo"] == nil }

    static func value(
        _ text: String, for parameter: EffectParameter, of effect: String
    ) throws(EffectSpecError) -> Double {
        let key = parameter.identifier
        if !parameter.choices.isEmpty {
            if let index = parameter.choices.firstIndex(where: { $0.lowercased() == text.lowercased() }) {
                return Double(index)
            }
            throw EffectSpecError(
                "\(effect): \(key)=\(text) is not one of \(parameter.choices.joined(separator: ", "))")
        }
        if parameter.unit == .boolean {
            switch text.lowercased() {
            case "on", "true", "yes", "1": return 1
            case "off", "false", "no", "0": return 0
            default: throw EffectSpecError("\(effect): \(key)=\(text) must be on or off")
            }
        }
        guard let number = Double(text), number.isFinite else {
            throw EffectSpecError("\(effect): \(key)=\(text) is not a number")
        }
        guard parameter.range.contains(number) else { throw outOfRange(text, for: parameter, of: effect) }
        return number
    }

    /// The error for `text`, a number outside `parameter`'s range.
    static func outOfRange(_ text: String, for parameter: EffectParameter, of effect: String) -> EffectSpecError {
        let key = parameter.identifier
        let range = "\(format(parameter.range.lowerBound))…\(format(parameter.range.upperBound))"
        switch parameter.unit {
        case .choice:
            return EffectSpecError(
                "\(effect): \(key)=\(text) is not the index of a choice, \(range) (\(parameter.choices.joined(separator: ", ")))"
            )
        case .boolean:
            return EffectSpecError("\(effect): \(key)=\(text) must be 0 (off) or 1 (on)")
        default:
            let unit = parameter.unit.rawValue.isEmpty ? "" : " \(parameter.unit.rawValue)"
            return EffectSpecError("\(effect): \(key)=\(text) is out of range \(range)\(unit)")
        }
    }

    /// Checks the values against the effect's parameter table, as `make(name:_:)` checks text: a value
    /// that is not a finite number, or lies outside its parameter's range (a choice's index, an `eq` band
    /// number), is an error. A `delay`'s `note` must be a positive fraction of a whole note. Keys the
    /// table does not list are left alone, as is an unknown effect (`EffectChain` refuses it).
    func checkValues() throws(EffectSpecError) {
        guard let effect = Self.catalog.first(where: { $0.name == name }) else { return }
        for parameter in effect.parameters {
            guard let number = values[parameter.identifier] else { continue }
            let text = Self.format(number)
            guard number.isFinite else {
                throw EffectSpecError("\(name): \(parameter.identifier)=\(text) is not a number")
            }
            guard parameter.range.contains(number) else { throw Self.outOfRange(text, for: parameter, of: name) }
        }
        if name == "delay", let note = values["note"], !(note.isFinite && note > 0) {
            throw EffectSpecError("delay: note=\(Self.format(note)) is not a note value (a fraction of a whole note)")
        }
    }

    /// A number as the parameter tables print it (no ".0" on whole numbers; infinities, NaN and whole
    /// numbers beyond 10^15 as `Double` prints them).
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// The value the spec gives `key`, or the default its effect's parameter table gives it: the one
    /// place where a node made from a spec gets what the spec leaves out, so that `pianola fx list`
    /// shows what runs. `key` must be in the table (a programming error otherwise).
    public func value(of key: String) -> Double {
        if let value = values[key] { return value }
        guard let effect = Self.catalog.first(where: { $0.name == name }),
            let parameter = effect.parameters.first(where: { $0.identifier == key })
        else { preconditionFailure("\(name) has no parameter '\(key)'") }
        return parameter.defaultValue
    }

    /// The band an `eq` or `filter` spec describes: a `q` given stands for the bandwidth.
    func band() -> FilterBand {
        var bandwidth = value(of: "bw")
        if let q = values["q"] { bandwidth = 2 * asinh(1 / (2 * q)) / log(2) }
        return FilterBand(
            type: FilterType.allCases[Int(value(of: "type"))], frequency: value(of: "freq"), gain: value(of: "gain"),
            bandwidth: bandwidth)
    }
}
