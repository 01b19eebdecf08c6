import AudioGraph
import FoundationEssentials
import MIDICore
import PianolaSupport
import SMF
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

extension OfflineRenderer {
    /// A renderer with the SoundFonts at `file:` URLs stacked (a later font's presets hide the
    /// same bank and program of an earlier one).
    public convenience init(soundFonts urls: [URL], options: RenderOptions = RenderOptions()) throws(SoundFontError) {
        var paths: [String] = []
        for url in urls {
            paths.append(try url.localPath { SoundFontError.notASoundFont(path: $0, reason: URL.notAFileReason) })
        }
        try self.init(soundFonts: paths, options: options)
    }

    /// Renders `sequence` to a `file:` URL (see `render(_:to:effects:progress:)`).
    public func render(
        _ sequence: MusicSequence, to url: URL, effects: [AudioNode]? = nil,
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        try render(sequence, to: url.localPath(or: Self.refuse), effects: effects, progress: progress)
    }

    /// Renders `file` to a `file:` URL.
    public func render(
        _ file: MIDIFile, to url: URL, progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        try render(file, to: url.localPath(or: Self.refuse), progress: progress)
    }

    private static func refuse(_ url: String) -> RenderError { .cannotWrite(path: url, reason: URL.notAFileReason) }
}

extension LatencyReport {
    /// Writes the report as JSON to a `file:` URL (through a temporary name and a rename).
    public func write(to url: URL) throws(SessionError) {
        try write(to: url.localPath { SessionError.cannotWrite(path: $0, reason: URL.notAFileReason) })
    }
}

extension LiveSession {
    /// Writes what was played as a MIDI file at a `file:` URL (tempo 120).
    public func writeRecording(to url: URL) throws(SessionError) {
        try writeRecording(to: url.localPath { SessionError.cannotWrite(path: $0, reason: URL.notAFileReason) })
    }
}
