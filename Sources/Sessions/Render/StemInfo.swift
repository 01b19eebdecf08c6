import Sequencer

/// How a render is split into stems.
public enum StemMode: String, CaseIterable, Sendable {
    /// One stem per track that plays notes.
    case track
    /// One stem per MIDI channel that plays notes.
    case channel
    /// One stem per General MIDI instrument family (piano, organ, guitar, …; drums apart), by the
    /// channel's program when each note starts.
    case program
}

/// One stem file and what it holds.
public struct StemInfo: Sendable {
    /// The file name (in the stems folder).
    public var file: String
    /// "mix", "track", "channel" or "family".
    public var kind: String
    public var name: String
    public var tracks: [Int]
    public var trackNames: [String]
    /// 1-based, as musicians count them.
    public var channels: [Int]
    public var programs: [Int]
    public var family: String?
    public var notes: Int
    /// Integrated loudness (LUFS) and true peak (dBTP), by libebur128.
    public var loudness: Double
    public var truePeak: Double
}

/// The General MIDI instrument families (program / 8).
public let generalMIDIFamilies = [
    "piano", "chromatic percussion", "organ", "guitar", "bass", "strings", "ensemble", "brass", "reed", "pipe",
    "synth lead", "synth pad", "synth effects", "ethnic", "percussive", "sound effects",
]
