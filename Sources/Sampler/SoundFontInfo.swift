import CFluidSynth

/// What a SoundFont holds, read through FluidSynth itself (so it describes the font exactly as it
/// will play): its presets and the warnings FluidSynth logged while loading it.
public struct SoundFontInfo: Sendable {
    /// One preset of the font, as FluidSynth reads it (a JSON object with `bank`, `program` and `name`).
    public struct Preset: Sendable, Hashable, Codable {
        /// The preset's bank number (128 holds the drum kits in General MIDI fonts).
        public var bank: Int
        /// The preset's program number, 0–127.
        public var program: Int
        /// The preset's name as the font stores it.
        public var name: String
    }

    /// The font file's path, as given to `load(path:)`.
    public var path: String
    /// Every preset in the font, sorted by bank, then program.
    public var presets: [Preset]
    /// Warnings and errors FluidSynth logged while loading the font; empty for a clean font.
    public var warnings: [String]

    /// Checks the file's structure without loading it (its headers only: fast even for a large
    /// font). Throws for a file FluidSynth could not load, naming the first problem; returns warnings
    /// about what would load but play wrong (samples cut short play silence).
    public static func inspect(path: String) throws(SoundFontError) -> [String] {
        try SoundFontFile.validate(path: path)
    }

    /// Loads the font into a scratch synthesizer and lists its presets, sorted by bank and program.
    public static func load(path: String) throws(SoundFontError) -> SoundFontInfo {
        let synth = try FluidSynth()
        let (id, warnings) = try synth.loadSoundFont(at: path)
        var presets: [Preset] = []
        if let font = fluid_synth_get_sfont_by_id(synth.synth, id) {
            fluid_sfont_iteration_start(font)
            while let preset = fluid_sfont_iteration_next(font) {
                presets.append(
                    Preset(
                        bank: Int(fluid_preset_get_banknum(preset)), program: Int(fluid_preset_get_num(preset)),
                        name: String(cString: fluid_preset_get_name(preset))))
            }
        }
        presets.sort { ($0.bank, $0.program) < ($1.bank, $1.program) }
        return SoundFontInfo(path: path, presets: presets, warnings: warnings)
    }
}
