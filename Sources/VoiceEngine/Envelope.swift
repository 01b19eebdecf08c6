/// A SoundFont envelope (delay, attack, hold, decay, sustain, release) counted in samples.
///
/// Section lengths are FluidSynth's block counts times its 64-sample block, so a note's envelope
/// has FluidSynth's timing; but the envelope is a function of the voice's age in samples, so a
/// note starting or released at any frame gets the same curve from that frame on.
struct Envelope {
    enum Section: Int { case delay, attack, hold, decay, sustain, release, finished }

    private(set) var section = Section.delay
    /// The level, 0…1: linear amplitude in the attack, else a fraction of a 96 dB span.
    private(set) var level = 0.0
    /// Samples spent in the current section.
    private var elapsed = 0
    /// The lengths in samples of delay, attack, hold and decay.
    private var lengths: SIMD4<Int> = .zero
    private var sustainLevel = 0.0
    private var releaseLength = 1

    static let block = 64

    /// An envelope from its generators: times in timecents (already key-scaled), the sustain as
    /// a level 0…1.
    init(
        delay: Double, attack: Double, hold: Double, decay: Double, sustain: Double, release: Double,
        sampleRate: Double, holdIsZero: Bool
    ) {
        let block = Double(Self.block)
        func blocks(_ timecents: Double, low: Double, high: Double) -> Double {
            sampleRate * Conversions.seconds(timecents: min(max(timecents, low), high)) / block
        }
        let delayBlocks = Int(blocks(delay, low: -12000, high: 5000))
        let attackBlocks = 1 + Int(blocks(attack, low: -12000, high: 8000))
        let holdBlocks = holdIsZero ? 0 : Int(blocks(hold, low: -12000, high: 5000) + 0.5)
        let decayBlocks = Int(blocks(decay, low: -12000, high: 8000) + 0.5)
        lengths = SIMD4(delayBlocks, attackBlocks, holdBlocks, decayBlocks) &* Self.block
        sustainLevel = min(max(sustain, 0), 1)
        releaseLength = (1 + Int(blocks(release, low: -12000, high: 8000))) * Self.block
        section = .delay
        level = 0
        elapsed = 0
        skipEmptySections()
    }

    var isFinished: Bool { section == .finished }
    /// The samples left in the delay section (0 once it is over).
    var delayRemaining: Int { section == .delay ? lengths[0] - elapsed : 0 }

    /// Moves the envelope on by `samples`.
    mutating func advance(_ samples: Int) {
        var left = samples
        while left > 0 && section != .finished {
            switch section {
            case .sustain:
                return
            case .release:
                let step = 1.0 / Double(releaseLength)
                let needed = Int((level / step).rounded(.up))
                if left >= needed {
                    level = 0
                    section = .finished
                    return
                }
                level -= step * Double(left)
                return
            case .decay:
                let step = 1.0 / Double(lengths[3])
                let needed = Int(((level - sustainLevel) / step).rounded(.up))
                if left >= needed {
                    left -= max(needed, 0)
                    level = sustainLevel
                    section = .sustain
                    if sustainLevel <= 0 { section = .finished }
                    continue
                }
                level -= step * Double(left)
                return
            default:
                let length = lengths[section.rawValue]
                let taken = min(left, length - elapsed)
                elapsed += taken
                left -= taken
                if section == .attack { level = min(1, Double(elapsed) / Double(length)) }
                if elapsed >= length { nextSection() }
            }
        }
    }

    /// Starts the release from the current level (an attack's level is first mapped to the same
    /// loudness on the decibel scale, as FluidSynth does, counting the modulation LFO's attenuation
    /// `lfoCentibels` then, so the release starts where the attack's amplitude was; `convexAttack`
    /// maps it as a modulation envelope's convex attack instead).
    mutating func release(convexAttack: Bool = false, lfoCentibels: Double = 0) {
        guard section != .finished, section != .release else { return }
        if section == .attack {
            if convexAttack {
                level = Conversions.curve(Conversions.convex, at: 127 * level)
            } else {
                let gain = level * Double(Conversions.amplitude(centibels: lfoCentibels))
                level = gain > 0 ? max(0, 1 + (200 * log10Clamped(gain) + lfoCentibels) / 960) : 0
            }
        } else if section == .delay {
            level = 0
        }
        section = .release
        elapsed = 0
        if level <= 0 { section = .finished }
    }

    /// Changes the release time (an exclusive class's cut uses −200 timecents).
    mutating func setRelease(timecents: Double, sampleRate: Double) {
        let blocks = sampleRate * Conversions.seconds(timecents: min(max(timecents, -12000), 8000)) / Double(Self.block)
        releaseLength = (1 + Int(blocks)) * Self.block
    }

    /// Stops at once.
    mutating func finish() {
        section = .finished
        level = 0
    }

    private mutating func nextSection() {
        elapsed = 0
        section = Section(rawValue: section.rawValue + 1) ?? .finished
        if section == .hold { level = 1 }
        skipEmptySections()
    }

    private mutating func skipEmptySections() {
        while section.rawValue <= Section.hold.rawValue && lengths[section.rawValue] == 0 {
            section = Section(rawValue: section.rawValue + 1)!
            if section == .hold || section == .decay { level = 1 }
        }
        if section == .decay && lengths[3] == 0 {
            level = sustainLevel
            section = sustainLevel <= 0 ? .finished : .sustain
        }
    }
}

private func log10Clamped(_ value: Double) -> Double {
    value > 1e-10 ? _log10(value) : -10
}

#if canImport(Glibc)
    import Glibc
    private func _log10(_ value: Double) -> Double { Glibc.log10(value) }
#elseif canImport(Darwin)
    import Darwin
    private func _log10(_ value: Double) -> Double { Darwin.log10(value) }
#endif
