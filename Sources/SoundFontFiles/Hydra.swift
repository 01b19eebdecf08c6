/// The nine chunks of the preset data ("hydra", SoundFont 2.04, 7.2), read into presets,
/// instruments and sample headers by the rules FluidSynth 2.3 applies when it loads a font.
struct Hydra {
    private let file: RIFFFile
    private var chunks: [String: [UInt8]] = [:]

    init(file: RIFFFile, chunks found: [String: (offset: Int, size: Int)]) throws(SoundFontReadError) {
        self.file = file
        var total = 0
        for (name, recordSize) in [
            ("phdr", 38), ("pbag", 4), ("pmod", 10), ("pgen", 4), ("inst", 22), ("ibag", 4), ("imod", 10),
            ("igen", 4), ("shdr", 46),
        ] {
            guard let chunk = found[name] else { throw file.failure("the preset data has no '\(name)' chunk") }
            guard chunk.size % recordSize == 0 else {
                throw file.failure(
                    "the '\(name)' chunk holds \(chunk.size) bytes, not a whole number of \(recordSize)-byte records")
            }
            total += chunk.size
            guard total <= RIFFFile.presetDataLimit else {
                throw file.failure("the preset data is larger than \(RIFFFile.presetDataLimit >> 20) MB")
            }
            chunks[name] = try file.read(chunk.size, at: chunk.offset)
        }
    }

    private func count(_ name: String, _ recordSize: Int) -> Int { chunks[name]!.count / recordSize }

    func sampleHeaders() throws(SoundFontReadError) -> [SampleHeader] {
        let data = chunks["shdr"]!
        let count = data.count / 46 - 1  // the last record is the terminal "EOS"
        guard count >= 0 else { throw file.failure("the 'shdr' chunk has no terminal record") }
        return (0..<count).map { index in
            let at = index * 46
            return SampleHeader(
                name: data.name(at: at), start: Int(data.u32(at: at + 20)), end: Int(data.u32(at: at + 24)),
                loopStart: Int(data.u32(at: at + 28)), loopEnd: Int(data.u32(at: at + 32)),
                sampleRate: Int(data.u32(at: at + 36)), originalPitch: Int(data[at + 40]),
                pitchCorrection: Int(Int8(bitPattern: data[at + 41])), link: Int(data.u16(at: at + 42)),
                type: Int(data.u16(at: at + 44)))
        }
    }

    func instruments(sampleCount: Int) throws(SoundFontReadError) -> [Instrument] {
        let data = chunks["inst"]!
        let count = data.count / 22 - 1
        guard count >= 0 else { throw file.failure("the 'inst' chunk has no terminal record") }
        var instruments: [Instrument] = []
        for index in 0..<count {
            let first = Int(data.u16(at: index * 22 + 20))
            let end = Int(data.u16(at: (index + 1) * 22 + 20))
            let (global, zones) = try zones(
                bags: "ibag", generators: "igen", modulators: "imod", first: first, end: end, isPreset: false,
                targetCount: sampleCount, owner: "instrument \(index)")
            instruments.append(Instrument(name: data.name(at: index * 22), globalZone: global, zones: zones))
        }
        return instruments
    }

    func presets(instrumentCount: Int) throws(SoundFontReadError) -> [Preset] {
        let data = chunks["phdr"]!
        let count = data.count / 38 - 1
        guard count >= 1 else { throw file.failure("the font has no presets") }
        var presets: [Preset] = []
        for index in 0..<count {
            let at = index * 38
            let first = Int(data.u16(at: at + 24))
            let end = Int(data.u16(at: at + 38 + 24))
            let (global, zones) = try zones(
                bags: "pbag", generators: "pgen", modulators: "pmod", first: first, end: end, isPreset: true,
                targetCount: instrumentCount, owner: "preset \(index)")
            presets.append(
                Preset(
                    name: data.name(at: at), bank: Int(data.u16(at: at + 22)), program: Int(data.u16(at: at + 20)),
                    globalZone: global, zones: zones))
        }
        return presets
    }

    /// The zones of the bags in `range`: the first becomes the global zone when it has no
    /// terminal generator; a later zone without one is dropped.
    private func zones(
        bags: String, generators: String, modulators: String, first: Int, end: Int, isPreset: Bool, targetCount: Int,
        owner: String
    ) throws(SoundFontReadError) -> (Zone?, [Zone]) {
        let bagData = chunks[bags]!
        let bagCount = bagData.count / 4
        guard first <= end else {
            throw file.failure("\(owner)'s zone indices are out of order (\(first) after \(end))")
        }
        guard end < bagCount else {
            throw file.failure(
                "\(owner)'s zones \(first)..<\(end) lie outside the '\(bags)' chunk (\(bagCount - 1) zones)")
        }
        let range = first..<end
        guard !range.isEmpty else { return (nil, []) }
        var global: Zone?
        var zones: [Zone] = []
        let generatorCount = count(generators, 4)
        let modulatorCount = count(modulators, 10)
        for bag in range {
            let (firstGenerator, endGenerator) = (Int(bagData.u16(at: bag * 4)), Int(bagData.u16(at: bag * 4 + 4)))
            let (firstModulator, endModulator) = (Int(bagData.u16(at: bag * 4 + 2)), Int(bagData.u16(at: bag * 4 + 6)))
            guard firstGenerator <= endGenerator, endGenerator <= generatorCount else {
                throw file.failure("\(owner)'s zone \(bag - first) has generator indices out of order")
            }
            guard firstModulator <= endModulator, endModulator <= modulatorCount else {
                throw file.failure("\(owner)'s zone \(bag - first) has modulator indices out of order")
            }
            let generatorRange = firstGenerator..<endGenerator
            let modulatorRange = firstModulator..<endModulator
            var (zone, answersNoNote) = readGenerators(generators, generatorRange, isPreset: isPreset)
            zone.modulators = readModulators(modulators, modulatorRange)
            if let target = zone.target {
                // A zone naming something that does not exist plays nothing (FluidSynth skips it);
                // nor does one whose key or velocity range starts above 127.
                if target < targetCount && !answersNoNote { zones.append(zone) }
            } else if bag == range.lowerBound {
                global = zone  // (FluidSynth 2.3.1 ignores a global zone's ranges)
            }
        }
        return (global, zones)
    }

    /// A zone's generators: ranges only first (key) and first or second (velocity), nothing after
    /// the terminal generator, the last of duplicates, and no generator the level does not allow.
    /// `answersNoNote` when a range starts above 127: no MIDI key or velocity reaches the zone
    /// (its range is left at 0...127, which a ClosedRange needs to stay inside MIDI's values).
    private func readGenerators(
        _ name: String, _ range: Range<Int>, isPreset: Bool
    ) -> (zone: Zone, answersNoNote: Bool) {
        let data = chunks[name]!
        var zone = Zone()
        var answersNoNote = false
        let terminal: Generator = isPreset ? .instrument : .sampleID
        for (position, index) in range.enumerated() {
            let at = index * 4
            guard let generator = Generator(rawValue: data.u16(at: at)) else { continue }
            let low = Int(data[at + 2])
            let high = Int(data[at + 3])
            let amount = Int16(bitPattern: data.u16(at: at + 2))
            switch generator {
            case .keyRange:
                if position == 0, low <= high {
                    if low > 127 { answersNoNote = true } else { zone.keyRange = low...min(high, 127) }
                }
            case .velocityRange:
                let afterKeys = position == 1 && Generator(rawValue: data.u16(at: at - 4)) == .keyRange
                if position == 0 || afterKeys, low <= high {
                    if low > 127 { answersNoNote = true } else { zone.velocityRange = low...min(high, 127) }
                }
            case terminal:
                zone.target = Int(data.u16(at: at + 2))
                return (zone, answersNoNote)
            case .instrument, .sampleID:
                continue  // the other level's terminal generator
            default:
                if !isPreset || generator.isValidInPreset { zone.generators[generator] = amount }
            }
        }
        return (zone, answersNoNote)
    }

    /// A zone's modulators: valid sources and destination, at most 64, the last of identical ones;
    /// a transform other than linear leaves the amount 0.
    private func readModulators(_ name: String, _ range: Range<Int>) -> [Modulator] {
        let data = chunks[name]!
        var modulators: [Modulator] = []
        for index in range {
            let at = index * 10
            let source = ModulatorSource(rawValue: data.u16(at: at))
            let amountSource = ModulatorSource(rawValue: data.u16(at: at + 6))
            guard source.isValid(allowingNone: false), amountSource.isValid(allowingNone: true),
                let destination = Generator(rawValue: data.u16(at: at + 2))
            else { continue }
            let transform = data.u16(at: at + 8)
            let amount = transform == 0 ? Int16(bitPattern: data.u16(at: at + 4)) : 0
            let modulator = Modulator(
                source: source, destination: destination, amount: amount, amountSource: amountSource,
                transform: transform)
            modulators.removeAll { $0.isIdentical(to: modulator) }
            modulators.append(modulator)
        }
        return Array(modulators.prefix(64))
    }
}
