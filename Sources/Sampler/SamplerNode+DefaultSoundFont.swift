extension SamplerNode {
    /// Loads the SoundFont a user would expect: `$PIANOLA_SOUNDFONT`, else the system's General
    /// MIDI font, else the General MIDI font bundled with Pianola (`SoundFontDiscovery` says
    /// which, and why).
    @discardableResult
    public func loadDefaultSoundFont() throws(SoundFontError) -> SoundFontID {
        try loadSoundFont(at: SoundFontDiscovery().resolve().path)
    }
}
