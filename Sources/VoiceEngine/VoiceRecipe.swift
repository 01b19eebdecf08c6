import SoundFontFiles

/// What a note-on starts on one sample: the generator values and modulators of one (preset zone,
/// instrument zone) pair, combined as FluidSynth 2.3 combines them (SoundFont 2.04, 9.4).
struct VoiceRecipe {
    /// The sample header to play.
    var sample: Int
    /// The keys and velocities that start it: the preset zone's ranges meet the instrument zone's.
    var keys: ClosedRange<Int>
    var velocities: ClosedRange<Int>
    /// Every generator's value before modulators: the default, replaced by the instrument's global
    /// then local zone, plus the preset's local (else global) zone. Initial attenuation's
    /// generator values count 0.4 (FluidSynth's EMU factor), not its modulators.
    var generators: GeneratorValues
    /// The voice's modulators: the defaults, the instrument's replacing identical ones, the
    /// preset's adding to identical ones.
    var modulators: [Modulator]

    /// Every recipe of `preset`, in the order FluidSynth starts the voices: a note starts those
    /// whose ranges hold its key and velocity.
    static func recipes(bank: SoundFontBank, preset: Preset) -> [VoiceRecipe] {
        var recipes: [VoiceRecipe] = []
        for presetZone in preset.zones {
            guard let instrumentIndex = presetZone.target, instrumentIndex < bank.instruments.count else { continue }
            let instrument = bank.instruments[instrumentIndex]
            for zone in instrument.zones {
                guard zone.keyRange.overlaps(presetZone.keyRange), zone.velocityRange.overlaps(presetZone.velocityRange)
                else { continue }
                guard let sampleIndex = zone.target, sampleIndex < bank.samples.count,
                    !bank.samples[sampleIndex].isROM
                else { continue }
                recipes.append(
                    recipe(
                        sample: sampleIndex, zone: zone, instrumentGlobal: instrument.globalZone,
                        presetZone: presetZone, presetGlobal: preset.globalZone))
            }
        }
        return recipes
    }

    private static func recipe(
        sample: Int, zone: Zone, instrumentGlobal: Zone?, presetZone: Zone, presetGlobal: Zone?
    ) -> VoiceRecipe {
        var generators = GeneratorValues()
        for generator in Generator.allCases {
            var value = Double(
                zone.generators[generator] ?? instrumentGlobal?.generators[generator] ?? generator.defaultValue)
            if generator.isValidInPreset,
                let added = presetZone.generators[generator] ?? presetGlobal?.generators[generator]
            {
                value += Double(added)
            }
            generators[generator] = value
        }
        generators[.initialAttenuation] *= 0.4
        var modulators = DefaultModulators.all
        // Instrument: the local zone's, and the global zone's that have no identical local twin.
        let instrumentModulators =
            zone.modulators
            + (instrumentGlobal?.modulators ?? []).filter { global in
                !zone.modulators.contains { $0.isIdentical(to: global) }
            }
        for modulator in instrumentModulators {
            if let index = modulators.firstIndex(where: { $0.isIdentical(to: modulator) }) {
                modulators[index].amount = modulator.amount
            } else if modulators.count < 64 {
                modulators.append(modulator)
            }
        }
        let presetModulators =
            presetZone.modulators
            + (presetGlobal?.modulators ?? []).filter { global in
                !presetZone.modulators.contains { $0.isIdentical(to: global) }
            }
        for modulator in presetModulators where modulator.amount != 0 {
            if let index = modulators.firstIndex(where: { $0.isIdentical(to: modulator) }) {
                modulators[index].amount = Int16(clamping: Int(modulators[index].amount) + Int(modulator.amount))
            } else if modulators.count < 64 {
                modulators.append(modulator)
            }
        }
        return VoiceRecipe(
            sample: sample,
            keys: max(
                zone.keyRange.lowerBound, presetZone.keyRange.lowerBound)...min(
                    zone.keyRange.upperBound, presetZone.keyRange.upperBound),
            velocities: max(
                zone.velocityRange.lowerBound, presetZone.velocityRange.lowerBound)...min(
                    zone.velocityRange.upperBound, presetZone.velocityRange.upperBound),
            generators: generators, modulators: modulators)
    }
}
