/// A SoundFont generator: one synthesis parameter a zone sets (SoundFont 2.04, 8.1.2).
///
/// The raw values are the file's generator numbers. Units follow the specification: timecents for
/// times, absolute cents for frequencies, centibels for levels, tenths of a percent for sends,
/// pan and the modulation envelope's sustain.
public enum Generator: UInt16, CaseIterable, Sendable {
    /// Sample points added to the sample's start.
    case startAddressOffset = 0
    /// Sample points added to the sample's end.
    case endAddressOffset = 1
    /// Sample points added to the loop's start.
    case startLoopAddressOffset = 2
    /// Sample points added to the loop's end.
    case endLoopAddressOffset = 3
    /// Multiples of 32768 sample points added to the sample's start.
    case startAddressCoarseOffset = 4
    /// How far the modulation LFO moves the pitch, in cents at full excursion.
    case modulationLFOToPitch = 5
    /// How far the vibrato LFO moves the pitch, in cents at full excursion.
    case vibratoLFOToPitch = 6
    /// How far the modulation envelope moves the pitch, in cents at its peak.
    case modulationEnvelopeToPitch = 7
    /// The low-pass filter's cutoff, in absolute cents.
    case initialFilterCutoff = 8
    /// The low-pass filter's resonance, in centibels above the DC gain.
    case initialFilterQ = 9
    /// How far the modulation LFO moves the cutoff, in cents at full excursion.
    case modulationLFOToFilterCutoff = 10
    /// How far the modulation envelope moves the cutoff, in cents at its peak.
    case modulationEnvelopeToFilterCutoff = 11
    /// Multiples of 32768 sample points added to the sample's end.
    case endAddressCoarseOffset = 12
    /// How far the modulation LFO moves the level, in centibels at full excursion.
    case modulationLFOToVolume = 13
    /// The share of the voice sent to the chorus, in tenths of a percent.
    case chorusSend = 15
    /// The share of the voice sent to the reverb, in tenths of a percent.
    case reverbSend = 16
    /// Where the voice sits, in tenths of a percent from left (−500) to right (500).
    case pan = 17
    /// The modulation LFO's delay before it starts, in timecents.
    case modulationLFODelay = 21
    /// The modulation LFO's frequency, in absolute cents.
    case modulationLFOFrequency = 22
    /// The vibrato LFO's delay before it starts, in timecents.
    case vibratoLFODelay = 23
    /// The vibrato LFO's frequency, in absolute cents.
    case vibratoLFOFrequency = 24
    /// The modulation envelope's delay, in timecents.
    case modulationEnvelopeDelay = 25
    /// The modulation envelope's attack, in timecents.
    case modulationEnvelopeAttack = 26
    /// The modulation envelope's hold, in timecents.
    case modulationEnvelopeHold = 27
    /// The modulation envelope's decay, in timecents.
    case modulationEnvelopeDecay = 28
    /// How far the modulation envelope falls for its sustain, in tenths of a percent.
    case modulationEnvelopeSustain = 29
    /// The modulation envelope's release, in timecents.
    case modulationEnvelopeRelease = 30
    /// Timecents per key number added to the modulation envelope's hold (key 60 adds none).
    case keyToModulationEnvelopeHold = 31
    /// Timecents per key number added to the modulation envelope's decay (key 60 adds none).
    case keyToModulationEnvelopeDecay = 32
    /// The volume envelope's delay, in timecents.
    case volumeEnvelopeDelay = 33
    /// The volume envelope's attack, in timecents.
    case volumeEnvelopeAttack = 34
    /// The volume envelope's hold, in timecents.
    case volumeEnvelopeHold = 35
    /// The volume envelope's decay, in timecents.
    case volumeEnvelopeDecay = 36
    /// How far the volume envelope falls for its sustain, in centibels.
    case volumeEnvelopeSustain = 37
    /// The volume envelope's release, in timecents.
    case volumeEnvelopeRelease = 38
    /// Timecents per key number added to the volume envelope's hold (key 60 adds none).
    case keyToVolumeEnvelopeHold = 39
    /// Timecents per key number added to the volume envelope's decay (key 60 adds none).
    case keyToVolumeEnvelopeDecay = 40
    /// The instrument a preset zone plays (an index).
    case instrument = 41
    /// The keys a zone plays.
    case keyRange = 43
    /// The velocities a zone plays.
    case velocityRange = 44
    /// Multiples of 32768 sample points added to the loop's start.
    case startLoopAddressCoarseOffset = 45
    /// A key number every note of the zone plays as (−1: the note's own).
    case fixedKey = 46
    /// A velocity every note of the zone plays with (−1: the note's own).
    case fixedVelocity = 47
    /// How much quieter the voice is, in centibels.
    case initialAttenuation = 48
    /// Multiples of 32768 sample points added to the loop's end.
    case endLoopAddressCoarseOffset = 50
    /// Semitones added to the pitch.
    case coarseTune = 51
    /// Cents added to the pitch.
    case fineTune = 52
    /// The sample an instrument zone plays (an index).
    case sampleID = 53
    /// How the sample loops: 0 not at all, 1 continuously, 3 until the key is released.
    case sampleModes = 54
    /// Cents of pitch per key (100: an equal-tempered semitone).
    case scaleTuning = 56
    /// A class whose new note ends the sounding notes of the same class (0: none).
    case exclusiveClass = 57
    /// A key number that plays the sample at its own pitch, in place of the sample's (−1: the sample's).
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
