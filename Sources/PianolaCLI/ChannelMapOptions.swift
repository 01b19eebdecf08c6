import ArgumentParser
import Pianola

/// `--channel-map` and `--channels`: parts of a song on other output channels than 1–2, for a
/// multichannel interface (play) or a multichannel file (render).
struct ChannelMapOptions: ParsableArguments {
    @Option(
        name: .customLong("channel-map"),
        help: ArgumentHelp(
            "Play MIDI channels on other output channels: MIDI:OUT, e.g. 10:3-4 (drums on outputs 3 and 4), "
                + "1-4,6:5-6, or mix:3-4 for every channel not routed (1-2 by default). Repeatable; each part "
                + "has its own synthesizer and effects.",
            valueName: "route"))
    var routes: [String] = []

    @Option(
        help: ArgumentHelp(
            "Output channels with --channel-map (default: the highest one named), for a device that takes only its own count.",
            valueName: "count"))
    var channels: Int?

    func validate() throws {
        if channels != nil && routes.isEmpty { throw ValidationError("--channels goes with --channel-map") }
        _ = try routing()
    }

    /// The routing the options describe; nil without `--channel-map`.
    func routing() throws -> ChannelRouting? {
        guard !routes.isEmpty else { return nil }
        var mix = [0, 1]
        var parsed: [ChannelRouting.Route] = []
        for spec in routes {
            guard let colon = spec.lastIndex(of: ":") else {
                throw ValidationError("--channel-map '\(spec)': write MIDI:OUT, e.g. 10:3-4")
            }
            let source = spec[..<colon].lowercased()
            guard let outputs = Self.numbers(spec[spec.index(after: colon)...]) else {
                throw ValidationError("--channel-map '\(spec)': the outputs are two numbers, e.g. 3-4 or 4,3")
            }
            if source == "mix" {
                mix = outputs.map { $0 - 1 }
            } else if let channels = source == "drums" ? [10] : Self.numbers(Substring(source)) {
                parsed.append(.init(midiChannels: channels.map { $0 - 1 }, outputs: outputs.map { $0 - 1 }))
            } else {
                throw ValidationError(
                    "--channel-map '\(spec)': before ':' come MIDI channels (10, 1-4,6), drums or mix")
            }
        }
        do { return try ChannelRouting(mixOutputs: mix, routes: parsed, channelCount: channels) } catch {
            let reason = "\(error)"
            throw ValidationError(
                "--channel-map: " + (reason.hasPrefix("channel map: ") ? reason.dropFirst(13) : reason[...]))
        }
    }

    /// `3-4`, `4,3`, `1-4,6`: the numbers listed, ranges expanded; nil if not such a list.
    private static func numbers(_ text: Substring) -> [Int]? {
        var result: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = item.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard let low = bounds.first ?? nil, bounds.count <= 2, let high = bounds.last ?? nil, low <= high,
                high - low < 64
            else { return nil }
            result += Array(low...high)
        }
        return result
    }
}
