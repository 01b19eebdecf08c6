/// Reverb presets, as AVAudioUnitReverb names them, each with the decay it is built for.
public enum ReverbPreset: String, CaseIterable, Hashable, Sendable {
    /// The presets, by the decay time each is built for (`reverberationTime`): `smallRoom` 0.4 s, `mediumRoom`
    /// 0.7 s, `largeRoom` 1.1 s, `mediumHall` 1.8 s (`ReverbNode`'s default), `largeHall` 2.6 s, `plate` 1.8 s
    /// (Dattorro's plate, brighter), `mediumChamber` 1.2 s, `largeChamber` 1.8 s, `cathedral` 5 s. Their
    /// pre-delays range from 2 ms (plate) to 40 ms (cathedral).
    case smallRoom, mediumRoom, largeRoom, mediumHall, largeHall, plate, mediumChamber, largeChamber, cathedral

    /// The cases in order, stored once (`allCases` allocates a new array on every call).
    static let table = ReverbPreset.allCases

    /// The target reverberation time: seconds for the level to fall by 60 dB, in the 1 kHz octave.
    public var reverberationTime: Double {
        switch self {
        case .smallRoom: return 0.4
        case .mediumRoom: return 0.7
        case .largeRoom: return 1.1
        case .mediumHall: return 1.8
        case .largeHall: return 2.6
        case .plate: return 1.8
        case .mediumChamber: return 1.2
        case .largeChamber: return 1.8
        case .cathedral: return 5
        }
    }

    /// Seconds before the reverberation starts.
    var preDelay: Double {
        switch self {
        case .smallRoom: return 0.005
        case .mediumRoom: return 0.008
        case .largeRoom: return 0.012
        case .mediumHall: return 0.020
        case .largeHall: return 0.030
        case .plate: return 0.002
        case .mediumChamber: return 0.010
        case .largeChamber: return 0.015
        case .cathedral: return 0.040
        }
    }

    /// Scale of the delay lines (the room's size).
    var size: Double {
        switch self {
        case .smallRoom: return 0.45
        case .mediumRoom: return 0.6
        case .largeRoom: return 0.75
        case .mediumHall, .largeChamber: return 1.0
        case .largeHall: return 1.0
        case .plate: return 0.55
        case .mediumChamber: return 0.8
        case .cathedral: return 1.0
        }
    }

    /// Decay time at Nyquist relative to the mid decay (high frequencies die sooner; a plate is bright).
    var highDecayRatio: Double { self == .plate ? 0.8 : 0.55 }
}
