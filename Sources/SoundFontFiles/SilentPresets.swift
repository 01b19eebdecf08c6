/// A preset that plays nothing, and why: the native engine's warning for a font it reads.
public struct SilentPreset: Sendable, Hashable {
    /// The preset's index in ``SoundFontBank/presets``.
    public var index: Int
    /// Why no note on it sounds, e.g. "it has no zones" or "its sample 'Piano' is in a ROM the
    /// file lacks" (the first sample's problem when none of its samples plays).
    public var reason: String
}

extension SoundFontBank {
    /// Why sample header `index` plays nothing, or nil when it plays: it is in a ROM the file
    /// lacks, lies outside the sample data, has no points, or (SoundFont 3) its Ogg Vorbis stream
    /// does not decode or decodes to no points.
    ///
    /// SoundFont 2 samples are checked against the sample data's bounds without reading their
    /// points; a SoundFont 3 sample is decoded, as ``readSample(_:)`` decodes it.
    public func sampleProblem(_ index: Int) -> String? {
        let header = samples[index]
        let name = printable(header.name)
        if header.isROM { return "its sample '\(name)' is in a ROM the file lacks" }
        if majorVersion == 3 && header.isCompressed {
            do throws(SoundFontReadError) {
                let sample = try readSample(index)
                return sample.count > 0 ? nil : "its sample '\(name)' decodes to no points"
            } catch {
                return error.problem
            }
        }
        let available = sampleData.size / 2
        guard header.start <= header.end, header.end <= available else {
            return "its sample '\(name)' lies outside the sample data"
        }
        return header.end > header.start ? nil : "its sample '\(name)' has no points"
    }

    /// ``sampleProblem(_:)`` for every sample header, in file order.
    ///
    /// On a large SoundFont 3 font this decodes every sample (FluidR3Mono_GM.sf3: a few seconds).
    public func sampleProblems() -> [String?] {
        samples.indices.map { sampleProblem($0) }
    }

    /// The presets no note sounds on: those without zones, those whose instruments have no zones,
    /// and those whose zones reach only samples that do not play (see ``sampleProblem(_:)``),
    /// each with the reason (for the last kind, the first sample's problem).
    ///
    /// - Parameter sampleProblems: ``sampleProblems()``, when the caller has them already;
    ///   by default each sample a preset reaches is checked, once.
    public func silentPresets(sampleProblems: [String?]? = nil) -> [SilentPreset] {
        var known: [Int: String?] = [:]
        func problem(_ index: Int) -> String? {
            if let sampleProblems { return sampleProblems[index] }
            if let found = known[index] { return found }
            let found = sampleProblem(index)
            known[index] = found
            return found
        }
        var silent: [SilentPreset] = []
        for (index, preset) in presets.enumerated() {
            let reached = preset.zones.flatMap { instruments[$0.target!].zones.map { $0.target! } }
            if preset.zones.isEmpty {
                silent.append(SilentPreset(index: index, reason: "it has no zones"))
            } else if reached.isEmpty {
                silent.append(SilentPreset(index: index, reason: "its instruments have no zones"))
            } else {
                var first: String?
                for sample in reached {
                    guard let why = problem(sample) else {
                        first = nil
                        break
                    }
                    if first == nil { first = why }
                }
                if let first { silent.append(SilentPreset(index: index, reason: first)) }
            }
        }
        return silent
    }
}
