import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// Why an effect description was refused: one line that names the effect, the parameter and what
/// it accepts.
public struct EffectSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What an effect is and what it takes: its entry in `pianola fx list`.
public struct EffectDescription: Sendable {
    public let name: String
    public let summary: String
    public let parameters: [EffectParameter]
    /// Whether this build has it (the others are announced but not built yet).
    public let isAvailable: Bool

    /// The Q range of `eq` and `filter`: the bands' bandwidth range, 0.05 … 5 octaves, as Q (rounded
    /// inward; a wider Q would be clamped silently).
    static let qRange: ClosedRange<Double> = 0.19...28.8
    /// `q` of `eq` and `filter`: the bandwidth as a quality factor.
    static let q = EffectParameter(
        "q", "quality factor (instead of bw)", range: qRange, default: 0.707, unit: .number)
    /// `matched` of `eq` and `filter`: the design.
    static let matched = EffectParameter(
        "matched", "matched design (follows the analog prototype up to Nyquist) instead of the cookbook",
        range: 0...1, default: 0, unit: .boolean)
}

/// One effect of a chain as the command line and chain files give it: a name and parameter values
/// (`eq:type=highShelf,freq=8000,gain=-6`). Values are checked against the effect's parameter table.
public struct EffectSpec: Hashable, Sendable {
    public var name: String
    /// Values by parameter key; choices are stored as their index, booleans as 0 or 1.
    public var values: [String: Double]

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
            ], isAvailable: true),
        EffectDescription(
            name: "filter", summary: "one filter band (default: low-pass)",
            parameters: FilterNode.parameters + [EffectDescription.q, EffectDescription.matched], isAvailable: true),
        EffectDescription(
            name: "reverb",
            summary: "room, hall, chamber, plate and cathedral reverb (a 16-line feedback delay network)",
            parameters: ReverbNode.parameters, isAvailable: true),
        EffectDescription(
            name: "limiter", summary: "look-ahead peak limiter with a ceiling and a true-peak mode",
            parameters: LimiterNode.parameters, isAvailable: true),
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
                "unknown effect '\(name)' (known: \(catalog.map(\.name).joined(separator: ", ")); see `pianola fx list`)"
            )
        }
        guard effect.isAvailable else { throw EffectSpecError("\(name): this effect is not built yet") }
        var spec = EffectSpec(name: name)
        for (key, text) in pairs {
            guard let parameter = effect.parameters.first(where: { $0.identifier == key }) else {
                throw EffectSpecError(
                    "\(name): unknown parameter '\(key)' (\(name) takes \(effect.parameters.map(\.identifier).joined(separator: ", ")))"
                )
            }
            spec.values[key] = try value(text, for: parameter, of: name)
        }
        return spec
    }

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
        guard parameter.range.contains(number) else {
            let unit = parameter.unit.rawValue.isEmpty ? "" : " \(parameter.unit.rawValue)"
            throw EffectSpecError(
                "\(effect): \(key)=\(text) is out of range \(format(parameter.range.lowerBound))…\(format(parameter.range.upperBound))\(unit)"
            )
        }
        return number
    }

    /// A number as the parameter tables print it (no ".0" on whole numbers).
    public static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The band an `eq` or `filter` spec describes.
    func band(defaultType: FilterType) -> FilterBand {
        let type = values["type"].map { FilterType.allCases[Int($0)] } ?? defaultType
        var bandwidth = values["bw"] ?? 1
        if let q = values["q"] { bandwidth = 2 * asinh(1 / (2 * q)) / log(2) }
        return FilterBand(
            type: type, frequency: values["freq"] ?? 1_000, gain: values["gain"] ?? 0, bandwidth: bandwidth)
    }
}

/// An ordered chain of effect nodes that processes stereo audio outside an engine (offline
/// renders, `pianola process`). Consecutive `eq` specs form one multi-band `EQNode`.
public final class EffectChain {
    public let nodes: [AudioNode]
    private var scratch: AudioBuffer
    private var sampleTime: Int64 = 0
    private let sampleRate: Double

    /// Builds and prepares the chain for `channelCount` channels at `sampleRate`.
    public init(
        _ specs: [EffectSpec], sampleRate: Double, channelCount: Int = 2, maximumFrameCount: Int = 4_096
    )
        throws(EffectSpecError)
    {
        let nodes = try Self.makeNodes(specs)
        self.nodes = nodes
        self.sampleRate = sampleRate
        scratch = AudioBuffer(channelCount: channelCount, frameCapacity: maximumFrameCount)
        let format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        for node in nodes {
            do { try node.prepare(format: format, maximumFrameCount: maximumFrameCount) } catch {
                throw EffectSpecError("\(node.name): \(error)")
            }
        }
    }

    /// The nodes of a chain, not yet prepared: to connect in an engine, in order.
    public static func makeNodes(_ specs: [EffectSpec]) throws(EffectSpecError) -> [AudioNode] {
        var nodes: [AudioNode] = []
        var index = 0
        while index < specs.count {
            let spec = specs[index]
            switch spec.name {
            case "eq":
                var run = [spec]
                while index + run.count < specs.count, specs[index + run.count].name == "eq" {
                    run.append(specs[index + run.count])
                }
                let count = run.map { Int($0.values["band"] ?? 0) }.max().map { max($0, run.count) } ?? run.count
                let eq = EQNode(numberOfBands: min(16, count))
                var next = 0
                for item in run {
                    let bandIndex = item.values["band"].map { Int($0) - 1 } ?? next
                    guard bandIndex < eq.bands.count else { throw EffectSpecError("eq: more than 16 bands") }
                    eq.bands[bandIndex].settings = item.band(defaultType: .parametric)
                    eq.bands[bandIndex].bypass = (item.values["bypass"] ?? 0) == 1
                    if let global = item.values["global"] { eq.globalGain = global }
                    if item.values["matched"] == 1 { eq.design = .matched }
                    next = bandIndex + 1
                }
                nodes.append(eq)
                index += run.count
            case "filter":
                let band = spec.band(defaultType: .lowPass)
                let filter = FilterNode(
                    type: band.type, frequency: band.frequency, gain: band.gain, bandwidth: band.bandwidth)
                if spec.values["matched"] == 1 { filter.design = .matched }
                nodes.append(filter)
                index += 1
            case "reverb":
                let reverb = ReverbNode(
                    preset: ReverbPreset.table[Int(spec.values["preset"] ?? 3)], wetDryMix: spec.values["mix"] ?? 50)
                nodes.append(reverb)
                index += 1
            case "limiter":
                let limiter = LimiterNode()
                limiter.attack = spec.values["attack"] ?? 5
                limiter.release = spec.values["release"] ?? 100
                limiter.preGain = spec.values["preGain"] ?? 0
                limiter.ceiling = spec.values["ceiling"] ?? -1
                limiter.truePeak = spec.values["truePeak"] == 1
                nodes.append(limiter)
                index += 1
            default:
                throw EffectSpecError("\(spec.name): this effect is not built yet")
            }
        }
        return nodes
    }

    /// The delay the chain adds, in frames (a limiter's look-ahead).
    public var latency: Int {
        nodes.reduce(0) { $0 + (($1 as? LimiterNode)?.latency ?? 0) }
    }

    /// How long the chain rings on after its input stops: a reverb's fall to −90 dB (1.5 × its
    /// reverberation time).
    public var tailSeconds: Double {
        nodes.compactMap { ($0 as? ReverbNode).map { 1.5 * $0.preset.reverberationTime } }.max() ?? 0
    }

    /// Processes `frameCount` frames of `buffer` in place (at most the maximum frame count).
    public func process(_ buffer: AudioBuffer, frameCount: Int) {
        let time = AudioTime(sampleTime: sampleTime, sampleRate: sampleRate)
        // Back and forth between the buffer and the scratch; one copy at the end at most.
        var (source, target) = (buffer, scratch)
        for node in nodes {
            node.process(source, into: target, frameCount: frameCount, time: time)
            swap(&source, &target)
        }
        if source !== buffer {
            for channel in 0..<min(buffer.channelCount, source.channelCount) {
                buffer.channel(channel).update(from: source.channel(channel), count: frameCount)
            }
        }
        sampleTime += Int64(frameCount)
    }
}
