import MIDICore
import SMF

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MusicSequence {
    /// Reads and builds a sequence from a Standard MIDI File at a `file:` URL (lenient reader).
    public convenience init(contentsOf url: URL) throws(MIDIFileError) {
        self.init(file: try MIDIFile.read(contentsOf: url).file)
    }
}

extension AudioSequencer {
    /// Loads a Standard MIDI File from a `file:` URL (damage is recovered, as `MIDIFile.read` does).
    public func load(from url: URL) throws(MIDIFileError) {
        load(try MusicSequence(contentsOf: url))
    }
}

extension MIDIRecorder {
    /// Writes the recording to a `file:` URL (through a temporary name and a rename).
    public func write(to url: URL) throws(MIDIFileError) {
        try midiFile().write(to: url)
    }
}
