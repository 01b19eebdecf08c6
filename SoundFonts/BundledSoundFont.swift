// The target that carries PianolaGM.sf2 as a SwiftPM resource (`resources:` in Package.swift).
// SwiftPM copies the font into `Pianola_BundledSoundFont.resources` beside every executable that
// links Pianola, where SoundFontDiscovery (in Sampler) looks for it: the font travels with the
// binary, and it is never looked for in the checkout. (SwiftPM's `Bundle.module` accessor would
// find it too, but it falls back to the build folder's absolute path and stops the program when
// neither holds it; Sampler looks by itself.)

/// The names under which SwiftPM ships the bundled font.
package enum BundledSoundFont {
    /// The font's file name, in this folder and in the resource folder.
    package static let fileName = "PianolaGM.sf2"
    /// The folder SwiftPM builds from this target's resources beside each executable: the
    /// package's name (`Pianola`, from Package.swift, whatever the checkout's folder is called),
    /// an underscore, the target's name.
    package static let resourceBundleName = "Pianola_BundledSoundFont.resources"
}
