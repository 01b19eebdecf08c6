import SoundFontFiles

/// What one MIDI channel holds between notes: its preset, controllers, wheel, pressure, pedals and
/// (N)RPN state, with the defaults FluidSynth 2.3 gives a channel.
struct ChannelState {
    var bank = 0
    var program = 0
    var isDrums = false
    var controllers = InlineArray<128, UInt8>(repeating: 0)
    var keyPressure = InlineArray<128, UInt8>(repeating: 0)
    var channelPressure = 0
    var pitchBend = 8192
    /// The pitch wheel's range in semitones (RPN 0, MSB only as in FluidSynth 2.3).
    var bendRange = 2
    /// RPN 1 fine tuning, in cents, and RPN 2 coarse tuning, in semitones.
    var fineTuning = 0.0
    var coarseTuning = 0.0
    /// Which parameter data entry changes: an RPN, an NRPN, or none.
    var selectedRPN: Int?
    var selectedNRPN: Int?
    /// The SF2 NRPN scheme's accumulating generator number (NRPN MSB 120).
    var nrpnGenerator = 0
    /// Offsets NRPNs give generators, added to every voice of the channel.
    var generatorOffsets = GeneratorValues()
    /// Whether the sostenuto pedal (CC66) is down.
    var sostenutoDown = false

    init(number: Int) {
        isDrums = number == 9
        bank = isDrums ? 128 : 0
        resetControllers(all: true)
    }

    /// Controller defaults: CC7 100, CC11 127, CC10 and CC8 64, CC70–79 64, the rest 0. Reset
    /// (CC121) keeps volume, pan, balance, the effect depths 91–95, 70–79 and the bank selects.
    mutating func resetControllers(all: Bool) {
        for number in 0..<128 {
            let kept =
                switch number {
                case 0, 7, 8, 10, 32, 70...79, 91...95: true
                default: false
                }
            if all || !kept { controllers[number] = 0 }
        }
        if all {
            controllers[7] = 100
            controllers[8] = 64
            controllers[10] = 64
            for number in 70...79 { controllers[number] = 64 }
        }
        controllers[11] = 127
        keyPressure = InlineArray<128, UInt8>(repeating: 0)
        channelPressure = 0
        pitchBend = 8192
        selectedRPN = nil
        selectedNRPN = nil
        controllers[101] = 127
        controllers[100] = 127
        controllers[99] = 127
        controllers[98] = 127
    }

    /// A modulator source's raw value and its scale (the value that maps to 1).
    func value(of source: ModulatorSource, key: Int, velocity: Int) -> (value: Double, range: Double) {
        if source.isController { return (Double(controllers[source.index]), 128) }
        switch source.general {
        case .noteOnVelocity: return (Double(velocity), 128)
        case .noteOnKey: return (Double(key), 128)
        case .polyPressure: return (Double(keyPressure[key & 127]), 128)
        case .channelPressure: return (Double(channelPressure), 128)
        case .pitchWheel: return (Double(pitchBend), 16384)
        case .pitchWheelSensitivity: return (Double(bendRange), 128)
        default: return (0, 128)
        }
    }

    /// A source mapped through its direction, polarity and curve (SoundFont 2.04, 8.2.1; FluidSynth's
    /// normalisation: value/128, the wheel value/16384).
    func mapped(_ source: ModulatorSource, key: Int, velocity: Int, isAmountSource: Bool) -> Double {
        if source.isNone { return isAmountSource ? 1 : 0 }
        let (raw, range) = value(of: source, key: key, velocity: velocity)
        var x = raw / range
        if source.isNegative { x = 1 - x }
        switch (source.curve, source.isBipolar) {
        case (.linear, false): return x
        case (.linear, true): return 2 * x - 1
        case (.concave, false): return Conversions.curve(Conversions.concave, at: 127 * x)
        case (.convex, false): return Conversions.curve(Conversions.convex, at: 127 * x)
        case (.concave, true), (.convex, true):
            let table = source.curve == .concave ? Conversions.concave : Conversions.convex
            let magnitude = Conversions.curve(table, at: 127 * 2 * abs(x - 0.5))
            return x >= 0.5 ? magnitude : -magnitude
        case (.switch, false): return x >= 0.5 ? 1 : 0
        case (.switch, true): return x >= 0.5 ? 1 : -1
        default: return 0
        }
    }
}
