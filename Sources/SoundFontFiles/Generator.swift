/// A SoundFont generator: one synthesis parameter a zone sets (SoundFont 2.04, 8.1.2).
///
/// The raw values are the file's generator numbers. Units follow the specification: timecents for
/// times, absolute cents for frequencies, centibels for levels, tenths of a percent for sends,
/// pan and the modulation envelope's sustain.
public enum Generator: UInt16, CaseIterable, Sendable {
    case startAddressOffset = 0
    case endAddressOffset = 1
    case startLoopAddressOffset = 2
    case endLoopAddressOffset = 3
    case startAddressCoarseOffset = 4
    case modulationLFOToPitch = 5
    case vibratoLFOToPitch = 6
    case modulationEnvelopeToPitch = 7
    case initialFilterCutoff = 8
    case initialFilterQ = 9
    case modulationLFOToFilterCutoff = 10
    case modulationEnvelopeToFilterCutoff = 11
    case endAddressCoarseOffset = 12
    case modulationLFOToVolume = 13
    case chorusSend = 15
    case reverbSend = 16
    case pan = 17
    case modulationLFODelay = 21
    case modulationLFOFrequency = 22
    case vibratoLFODelay = 23
    case vibratoLFOFrequency = 24
    case modulationEnvelopeDelay = 25
    case modulationEnvelopeAttack = 26
    case modulationEnvelopeHold = 27
    case modulationEnvelopeDecay = 28
    case modulationEnvelopeSustain = 29
    case modulationEnvelopeRelease = 30
    case keyToModulationEnvelopeHold = 31
    case keyToModulationEnvelopeDecay = 32
    case volumeEnvelopeDelay = 33
    case volumeEnvelopeAttack = 34
    case volumeEnvelopeHold = 35
    case volumeEnvelopeDecay = 36
    case volumeEnvelopeSustain = 37
    case volumeEnvelopeRelease = 38
    case keyToVolumeEnvelopeHold = 39
    case keyToVolumeEnvelopeDecay = 40
    case instrument = 41
    case keyRange = 43
    case velocityRange = 44
    case startLoopAddressCoarseOffset = 45
    case fixedKey = 46
    case fixedVelocity = 47
    case initialAttenuation = 48
    case endLoopAddressCoarseOffset = 50
    case coarseTune = 51
    case fineTune = 52
    case sampleID = 53
    case sampleModes = 54
    case scaleTuning = 56
    case exclusiveClass = 57
    case overridingRootKey = 58

    /// The number of generator slots, reserved and unused numbers included (0 ..< 60).
    public static let slotCount = 60

    /// The value a generator has when no zone sets it (SoundFont 2.04, 8.1.3).
    public var defaultValue: Int16 {
        switch self {
        case .initialFilterCutoff: 13500
        case .modulationLFODelay, .vibratoLFODelay, .modulationEnvelopeDelay, .modulationEnvelopeAttack,
            .modulationEnvelopeHold, .modulationEnvelopeDecay, .modulationEnvelopeRelease, .volumeEnvelopeDelay,
            .volumeEnvelopeAttack, .volumeEnvelopeHold, .volumeEnvelopeDecay, .volumeEnvelopeRelease:
            -12000
        case .fixedKey, .fixedVelocity, .overridingRootKey: -1
        case .scaleTuning: 100
        default: 0
        }
    }

    /// Whether a preset zone may set this generator. Sample addresses, the fixed key and
    /// velocity, the sample, its modes, the exclusive class and the root key belong to
    /// instruments alone (SoundFont 2.04, 8.1.2); FluidSynth drops them from preset zones.
    public var isValidInPreset: Bool {
        switch self {
        case .startAddressOffset, .endAddressOffset, .startLoopAddressOffset, .endLoopAddressOffset,
            .startAddressCoarseOffset, .endAddressCoarseOffset, .startLoopAddressCoarseOffset,
            .endLoopAddressCoarseOffset, .fixedKey, .fixedVelocity, .sampleID, .sampleModes, .exclusiveClass,
            .overridingRootKey:
            false
        default: true
        }
    }
}

/// The generator values of one zone: which generators it sets, and to what.
///
/// Key and velocity ranges and the zone's instrument or sample are kept by ``Zone`` itself; a
/// generator set holds the rest, in the file's 16-bit amounts.
public struct GeneratorSet: Sendable, Hashable {
    private var values = [Int16](repeating: 0, count: Generator.slotCount)
    private var present: UInt64 = 0

    /// An empty set: every generator unset.
    public init() {}

    /// The value the zone gives `generator`, or nil when it does not set it.
    public subscript(generator: Generator) -> Int16? {
        get { present & (1 << UInt64(generator.rawValue)) != 0 ? values[Int(generator.rawValue)] : nil }
        set {
            let bit: UInt64 = 1 << UInt64(generator.rawValue)
            if let newValue {
                values[Int(generator.rawValue)] = newValue
                present |= bit
            } else {
                values[Int(generator.rawValue)] = 0
                present &= ~bit
            }
        }
    }

    /// Whether the zone sets no generator.
    public var isEmpty: Bool { present == 0 }

    /// The generators the zone sets, in number order.
    public var generators: [Generator] { Generator.allCases.filter { self[$0] != nil } }
}
