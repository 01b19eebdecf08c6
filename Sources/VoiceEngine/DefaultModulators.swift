import SoundFontFiles

/// The modulators every voice starts with (SoundFont 2.04, 8.4), as FluidSynth 2.3 has them.
enum DefaultModulators {
    private static func source(_ raw: UInt16) -> ModulatorSource { ModulatorSource(rawValue: raw) }

    /// Velocity to filter cutoff (8.4.2): FluidSynth 2.3 keeps it in the list but it, and any
    /// modulator identical to it, evaluates to 0.
    static let velocityToFilterCutoff = Modulator(
        source: source(0x0102), destination: .initialFilterCutoff, amount: -2400, amountSource: source(0x0C02))

    /// The list, in FluidSynth's order. The pitch wheel lands on fine tune (FluidSynth's choice).
    static let all: [Modulator] = [
        Modulator(source: source(0x0502), destination: .initialAttenuation, amount: 960, amountSource: source(0)),
        velocityToFilterCutoff,
        Modulator(source: source(0x000D), destination: .vibratoLFOToPitch, amount: 50, amountSource: source(0)),
        Modulator(source: source(0x0081), destination: .vibratoLFOToPitch, amount: 50, amountSource: source(0)),
        Modulator(source: source(0x0587), destination: .initialAttenuation, amount: 960, amountSource: source(0)),
        Modulator(source: source(0x028A), destination: .pan, amount: 500, amountSource: source(0)),
        Modulator(source: source(0x058B), destination: .initialAttenuation, amount: 960, amountSource: source(0)),
        Modulator(source: source(0x00DB), destination: .reverbSend, amount: 200, amountSource: source(0)),
        Modulator(source: source(0x00DD), destination: .chorusSend, amount: 200, amountSource: source(0)),
        Modulator(source: source(0x020E), destination: .fineTune, amount: 12700, amountSource: source(0x0010)),
    ]
}
