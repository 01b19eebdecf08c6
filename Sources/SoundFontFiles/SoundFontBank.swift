#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A zone: the key and velocity ranges it answers, the generators and modulators it sets, and
/// the instrument (in a preset) or sample (in an instrument) it plays (SoundFont 2.04, 7.3–7.9).
public struct Zone: Sendable, Hashable {
    /// The keys the zone answers.
    public var keyRange: ClosedRange<Int> = 0...127
    /// The velocities the zone answers.
    public var velocityRange: ClosedRange<Int> = 0...127
    /// The generators the zone sets, besides its ranges and its instrument or sample.
    public var generators = GeneratorSet()
    /// The zone's modulators, after FluidSynth's load rules (valid sources, last identical wins).
    public var modulators: [Modulator] = []
    /// The index of the instrument (in a preset zone) or sample header (in an instrument zone)
    /// the zone plays; nil for a global zone.
    public var target: Int?

    /// An empty zone answering every key and velocity.
    public init() {}

    /// Whether the zone answers `key` at `velocity`.
    public func contains(key: Int, velocity: Int) -> Bool {
        keyRange.contains(key) && velocityRange.contains(velocity)
    }
}

/// A preset: what a bank and program select (SoundFont 2.04, 7.2).
public struct Preset: Sendable, Hashable {
    /// The preset's name.
    public var name: String
    /// The MIDI bank (128 for percussion).
    public var bank: Int
    /// The MIDI program, 0–127.
    public var program: Int
    /// The global zone, whose generators and modulators every zone inherits.
    public var globalZone: Zone?
    /// The zones, each naming an instrument.
    public var zones: [Zone]
}

/// An instrument: zones that each name a sample (SoundFont 2.04, 7.6).
public struct Instrument: Sendable, Hashable {
    /// The instrument's name.
    public var name: String
    /// The global zone, whose generators and modulators every zone inherits.
    public var globalZone: Zone?
    /// The zones, each naming a sample header.
    public var zones: [Zone]
}

/// Where a sample's data lies and how it plays (SoundFont 2.04, 7.10).
public struct SampleHeader: Sendable, Hashable {
    /// The sample's name.
    public var name: String
    /// The first sample point (SoundFont 2) or the first byte of its Ogg stream (SoundFont 3),
    /// counted from the start of the `smpl` chunk.
    public var start: Int
    /// One past the last sample point (SoundFont 2), or past the Ogg stream's last byte.
    public var end: Int
    /// The loop's first point (SoundFont 2: in the `smpl` chunk; SoundFont 3: in the decoded sample).
    public var loopStart: Int
    /// One past the loop's last point, counted as ``loopStart`` is.
    public var loopEnd: Int
    /// The rate the sample was recorded at, in hertz.
    public var sampleRate: Int
    /// The MIDI key at which the sample plays at its recorded pitch.
    public var originalPitch: Int
    /// A pitch correction in cents.
    public var pitchCorrection: Int
    /// The linked sample (the other side of a stereo pair).
    public var link: Int
    /// The sample type's flags: 1 mono, 2 right, 4 left, 8 linked, 0x10 Ogg Vorbis, 0x8000 ROM.
    public var type: Int

    /// Whether the sample lives in a ROM the file does not hold.
    public var isROM: Bool { type & 0x8000 != 0 }
    /// Whether the sample is an Ogg Vorbis stream (SoundFont 3).
    public var isCompressed: Bool { type & 0x10 != 0 }
}

/// A SoundFont 2 or 3 file as a voice engine reads it: presets, instruments, zones with their
/// generators and modulators, and sample headers, read by the rules FluidSynth 2.3 applies, so
/// that the same notes start the same voices.
///
/// Reading a bank reads the preset data (a few hundred kilobytes at most); sample data stays in
/// the file until ``readSample(_:)`` reads the samples a song reaches.
public struct SoundFontBank: Sendable {
    /// The file the bank was read from.
    public let path: String
    /// The file's format version: 2 (16-bit samples) or 3 (Ogg Vorbis samples).
    public let majorVersion: Int
    /// The bank's name (the INFO list's `INAM`).
    public let name: String
    /// The presets, in file order.
    public let presets: [Preset]
    /// The instruments, in file order.
    public let instruments: [Instrument]
    /// The sample headers, in file order (the terminal record excluded).
    public let samples: [SampleHeader]
    /// Where the `smpl` chunk's data starts in the file, and its size in bytes.
    public let sampleData: (offset: Int, size: Int)
    /// Where the `sm24` chunk's data starts and its size (SoundFont 2.04's 24-bit extension), if any.
    public let sampleData24: (offset: Int, size: Int)?

    /// Reads the bank at `path`: its structure and preset data, not its samples.
    ///
    /// - Throws: ``SoundFontReadError`` naming the file and the first problem.
    public init(contentsOf path: String) throws(SoundFontReadError) {
        let file = try RIFFFile(path: path)
        defer { file.close() }
        self.path = path
        let structure = try file.structure()
        majorVersion = structure.majorVersion
        name = structure.name
        sampleData = structure.smpl
        sampleData24 = structure.sm24
        let hydra = try Hydra(file: file, chunks: structure.pdta)
        samples = try hydra.sampleHeaders()
        instruments = try hydra.instruments(sampleCount: samples.count)
        presets = try hydra.presets(instrumentCount: instruments.count)
    }

    /// The preset at `bank` and `program`, if the bank has one.
    public func preset(bank: Int, program: Int) -> Preset? {
        presets.first { $0.bank == bank && $0.program == program }
    }
}

/// Why a SoundFont could not be read: the file, and the first problem in words.
public struct SoundFontReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The first problem found, e.g. "the 'pdta' list is missing".
    public var problem: String

    /// An error for `path`.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// "PATH: not a usable SoundFont: PROBLEM".
    public var description: String { "\(path): not a usable SoundFont: \(problem)" }
}
