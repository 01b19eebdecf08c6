/// A minimal, spec-conformant SoundFont 2.01 serializer.
///
/// It writes exactly what a SoundFont 2.01 file needs (INFO, 16-bit `smpl`, and the nine `pdta`
/// sub-chunks with their terminal records) and nothing else: no modulators beyond the default
/// ones, no 24-bit `sm24` data, no stereo sample links. Generators are written in the order the
/// specification requires (keyRange first, velRange second, sampleID/instrument last).
public struct SoundFont2Bank: Sendable {
    public var name: String
    public var comment: String
    public var copyright: String
    public var samples: [Sample] = []
    public var instruments: [Instrument] = []
    public var presets: [Preset] = []

    public init(name: String, comment: String, copyright: String) {
        self.name = name
        self.comment = comment
        self.copyright = copyright
    }

    /// One mono 16-bit sample with an optional loop (indices relative to the sample's first frame).
    public struct Sample: Sendable {
        public var name: String
        public var frames: [Int16]
        public var loopStart: Int
        public var loopEnd: Int
        public var sampleRate: Int
        public var rootKey: Int
        /// Cents to add to the nominal root key to reach the sample's true pitch, negated as the
        /// SoundFont `chPitchCorrection` field expects.
        public var pitchCorrection: Int

        public init(
            name: String, frames: [Int16], loopStart: Int, loopEnd: Int, sampleRate: Int, rootKey: Int,
            pitchCorrection: Int
        ) {
            self.name = name
            self.frames = frames
            self.loopStart = loopStart
            self.loopEnd = loopEnd
            self.sampleRate = sampleRate
            self.rootKey = rootKey
            self.pitchCorrection = pitchCorrection
        }
    }

    public struct Zone: Sendable {
        public var keyRange: ClosedRange<Int>?
        public var velocityRange: ClosedRange<Int>?
        public var generators: [(Generator, Int)]
        /// Sample index (instrument zones) or instrument index (preset zones); nil for a global zone.
        public var target: Int?

        public init(
            keyRange: ClosedRange<Int>? = nil, velocityRange: ClosedRange<Int>? = nil,
            generators: [(Generator, Int)] = [], target: Int?
        ) {
            self.keyRange = keyRange
            self.velocityRange = velocityRange
            self.generators = generators
            self.target = target
        }
    }

    public struct Instrument: Sendable {
        public var name: String
        public var zones: [Zone]
        public init(name: String, zones: [Zone]) {
            self.name = name
            self.zones = zones
        }
    }

    public struct Preset: Sendable {
        public var name: String
        public var program: Int
        public var bank: Int
        public var zones: [Zone]
        public init(name: String, program: Int, bank: Int, zones: [Zone]) {
            self.name = name
            self.program = program
            self.bank = bank
            self.zones = zones
        }
    }

    /// SoundFont 2.01 generator operators used by the generator (section 8.1.2 of the spec).
    public enum Generator: UInt16, Sendable {
        case modLFOToPitch = 5, vibLFOToPitch = 6, modEnvToPitch = 7
        case initialFilterFc = 8, initialFilterQ = 9, modLFOToFilterFc = 10, modEnvToFilterFc = 11
        case modLFOToVolume = 13, chorusEffectsSend = 15, reverbEffectsSend = 16, pan = 17
        case delayModLFO = 21, freqModLFO = 22, delayVibLFO = 23, freqVibLFO = 24
        case delayModEnv = 25, attackModEnv = 26, holdModEnv = 27, decayModEnv = 28
        case sustainModEnv = 29, releaseModEnv = 30
        case delayVolEnv = 33, attackVolEnv = 34, holdVolEnv = 35, decayVolEnv = 36
        case sustainVolEnv = 37, releaseVolEnv = 38, keynumToVolEnvDecay = 40
        case instrument = 41, keyRange = 43, velRange = 44
        case initialAttenuation = 48, coarseTune = 51, fineTune = 52, sampleID = 53, sampleModes = 54
        case scaleTuning = 56, exclusiveClass = 57, overridingRootKey = 58
    }

    /// Serializes the bank as a RIFF `sfbk` file.
    public func serialized() -> [UInt8] {
        var info = RIFFWriter()
        info.chunk("ifil") {
            $0.u16(2); $0.u16(1)
        }
        info.chunk("isng") { $0.zstr("EMU8000") }
        info.chunk("INAM") { $0.zstr(name) }
        info.chunk("ICOP") { $0.zstr(copyright) }
        info.chunk("ICMT") { $0.zstr(comment) }
        info.chunk("ISFT") { $0.zstr("Pianola generate-soundfont") }

        var sampleData = RIFFWriter()
        var headers: [(start: Int, end: Int, loopStart: Int, loopEnd: Int)] = []
        var position = 0
        for sample in samples {
            headers.append(
                (position, position + sample.frames.count, position + sample.loopStart, position + sample.loopEnd))
            for frame in sample.frames { sampleData.u16(UInt16(bitPattern: frame)) }
            // The specification asks for 46 zero-valued frames after every sample.
            for _ in 0..<46 { sampleData.u16(0) }
            position += sample.frames.count + 46
        }

        var pdta = RIFFWriter()
        let presetTable = zoneTables(presets.map(\.zones), targetGenerator: .instrument)
        let instrumentTable = zoneTables(instruments.map(\.zones), targetGenerator: .sampleID)

        pdta.chunk("phdr") { out in
            for (index, preset) in presets.enumerated() {
                out.fixedString(preset.name, length: 20)
                out.u16(UInt16(preset.program))
                out.u16(UInt16(preset.bank))
                out.u16(UInt16(presetTable.firstBag[index]))
                out.u32(0); out.u32(0); out.u32(0)
            }
            out.fixedString("EOP", length: 20)
            out.u16(0); out.u16(0)
            out.u16(UInt16(presetTable.bags.count))
            out.u32(0); out.u32(0); out.u32(0)
        }
        pdta.chunk("pbag") { presetTable.writeBags(into: &$0) }
        pdta.chunk("pmod") { $0.zeros(10) }
        pdta.chunk("pgen") { presetTable.writeGenerators(into: &$0) }
        pdta.chunk("inst") { out in
            for (index, instrument) in instruments.enumerated() {
                out.fixedString(instrument.name, length: 20)
                out.u16(UInt16(instrumentTable.firstBag[index]))
            }
            out.fixedString("EOI", length: 20)
            out.u16(UInt16(instrumentTable.bags.count))
        }
        pdta.chunk("ibag") { instrumentTable.writeBags(into: &$0) }
        pdta.chunk("imod") { $0.zeros(10) }
        pdta.chunk("igen") { instrumentTable.writeGenerators(into: &$0) }
        pdta.chunk("shdr") { out in
            for (sample, header) in zip(samples, headers) {
                out.fixedString(sample.name, length: 20)
                out.u32(UInt32(header.start))
                out.u32(UInt32(header.end))
                out.u32(UInt32(header.loopStart))
                out.u32(UInt32(header.loopEnd))
                out.u32(UInt32(sample.sampleRate))
                out.u8(UInt8(sample.rootKey))
                out.u8(UInt8(bitPattern: Int8(sample.pitchCorrection)))
                out.u16(0)
                out.u16(1)  // monoSample
            }
            out.fixedString("EOS", length: 20)
            out.zeros(26)
        }

        var body = RIFFWriter()
        body.list("INFO", info.bytes)
        body.list("sdta", RIFFWriter.chunkBytes("smpl", sampleData.bytes))
        body.list("pdta", pdta.bytes)
        var file = RIFFWriter()
        file.chunk("RIFF") {
            $0.ascii("sfbk"); $0.raw(body.bytes)
        }
        return file.bytes
    }

    private struct ZoneTable {
        var firstBag: [Int] = []
        var bags: [Int] = []  // index of each bag's first generator
        var generators: [(UInt16, UInt16)] = []

        func writeBags(into out: inout RIFFWriter) {
            for first in bags { out.u16(UInt16(first)); out.u16(0) }
            out.u16(UInt16(generators.count)); out.u16(0)
        }

        func writeGenerators(into out: inout RIFFWriter) {
            for (op, amount) in generators { out.u16(op); out.u16(amount) }
            out.zeros(4)
        }
    }

    private func zoneTables(_ owners: [[Zone]], targetGenerator: Generator) -> ZoneTable {
        var table = ZoneTable()
        for zones in owners {
            table.firstBag.append(table.bags.count)
            for zone in zones {
                table.bags.append(table.generators.count)
                if let keys = zone.keyRange {
                    table.generators.append((Generator.keyRange.rawValue, rangeAmount(keys)))
                }
                if let velocities = zone.velocityRange {
                    table.generators.append((Generator.velRange.rawValue, rangeAmount(velocities)))
                }
                for (generator, amount) in zone.generators {
                    table.generators.append((generator.rawValue, UInt16(bitPattern: Int16(amount))))
                }
                if let target = zone.target {
                    table.generators.append((targetGenerator.rawValue, UInt16(target)))
                }
            }
        }
        return table
    }

    private func rangeAmount(_ range: ClosedRange<Int>) -> UInt16 {
        UInt16(range.lowerBound) | UInt16(range.upperBound) << 8
    }
}
