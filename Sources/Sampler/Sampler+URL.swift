import MIDICore
import PianolaSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SamplerNode {
    /// Loads the SoundFont at a `file:` URL on top of the sampler's stack (see `loadSoundFont(at:)`).
    @discardableResult
    public func loadSoundFont(at url: URL) throws(SoundFontError) -> SoundFontID {
        try loadSoundFont(at: url.localPath { SoundFontError.notASoundFont(path: $0, reason: URL.notAFileReason) })
    }

    /// Loads the SoundFont at a `file:` URL off the calling task's thread.
    @discardableResult
    public func loadSoundFont(at url: URL) async throws(SoundFontError) -> SoundFontID {
        try await loadSoundFont(
            at: url.localPath { SoundFontError.notASoundFont(path: $0, reason: URL.notAFileReason) })
    }
}

extension SoundFontInfo {
    /// Lists the presets of the SoundFont at a `file:` URL.
    public static func load(url: URL) throws(SoundFontError) -> SoundFontInfo {
        try load(path: url.localPath { SoundFontError.notASoundFont(path: $0, reason: URL.notAFileReason) })
    }
}
