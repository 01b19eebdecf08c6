import FoundationEssentials
import MIDICore

#if canImport(Glibc)
    import Glibc
#endif

/// How a render is split into stems.
public enum StemMode: String, CaseIterable, Sendable, Encodable {
    /// One stem per track that plays notes.
    case track
    /// One stem per MIDI channel that plays notes.
    case channel
    /// One stem per General MIDI instrument family (piano, organ, guitar, …; drums apart), by the
    /// channel's program when each note starts.
    case program
}

/// One stem file and what it holds.
public struct StemInfo: Sendable, Encodable {
    /// The file name (in the stems folder): `track-NN-NAME` with the track's number as `tracks`
    /// has it (from 0, as `pianola info` counts), `channel-NN` with the channel's number (from 1),
    /// or the family's name; NAME is the stem's name in lowercase letters, digits and dashes.
    public var file: String
    /// "mix", "track", "channel" or "family".
    public var kind: String
    /// "mix", the track's name without the spaces and control characters it was padded with (else
    /// "track N", N as in `tracks`), "channel N" (1-based), or the instrument family.
    public var name: String
    /// The tracks its notes come from: 0-based, in file order, ascending.
    public var tracks: [Int]
    /// The names of those tracks that have one, without their padding (empty for the mix).
    public var trackNames: [String]
    /// The MIDI channels its notes are on: 0-based (0–15) like every channel in the library,
    /// ascending; `stems.json` shows them 1-based, as musicians count them.
    public var channels: [UInt8]
    /// The programs (0–127) its notes start with, ascending.
    public var programs: [UInt8]
    /// The General MIDI instrument family ("piano", …, "drums"): a program stem's own; otherwise that of a
    /// stem on one channel with one program ("drums" on channel 10), else nil. Nil for the mix.
    public var family: String?
    /// How many notes it plays.
    public var notes: Int
    /// Integrated loudness (LUFS) and true peak (dBTP), by libebur128.
    public var loudness: Double
    /// The true peak in dBTP, −∞ when silent (`stems.json`: to 0.01, or null).
    public var truePeak: Double
    /// The sample peak in dBFS, before any integer encoding clips it, as a render's summary has
    /// it; −∞ when silent (`stems.json`: to 0.01, or null).
    public var peak: Double = -.infinity

    private enum CodingKeys: String, CodingKey {
        case file, kind, name, tracks, trackNames, channels, programs, family, notes, loudness, truePeak, peak
    }

    /// As `stems.json` has it: loudness and the peaks to 0.01, null when silent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(kind, forKey: .kind)
        try container.encode(name, forKey: .name)
        try container.encode(tracks, forKey: .tracks)
        try container.encode(trackNames, forKey: .trackNames)
        try container.encode(channels.map { Int($0) + 1 }, forKey: .channels)
        try container.encode(programs, forKey: .programs)
        try container.encode(family, forKey: .family)
        try container.encode(notes, forKey: .notes)
        for (value, key) in [(loudness, CodingKeys.loudness), (truePeak, .truePeak), (peak, .peak)] {
            if value.isFinite {
                try container.encode((value * 100).rounded() / 100, forKey: key)
            } else {
                try container.encodeNil(forKey: key)
            }
        }
    }
}

/// `stems.json`: what a stems render wrote, for the tools that read the stems.
public struct StemsDocument: Sendable, Encodable {
    /// The MIDI file.
    public var input: String
    /// How the render was split.
    public var mode: StemMode
    /// The stems' sample rate in Hz.
    public var sampleRate: Double
    /// The length of every stem (they all start on the same frame).
    public var frames: Int
    /// The mix first, then one entry per stem.
    public var stems: [StemInfo]
    /// The one multichannel file of every stem, if one was written: stem k (1-based, in `stems`
    /// after the mix) on channels 2k − 1 and 2k.
    public var multichannel: String?

    /// The document of a stems render of `input`.
    public init(
        input: String, mode: StemMode, sampleRate: Double, frames: Int, stems: [StemInfo], multichannel: String? = nil
    ) {
        self.input = input
        self.mode = mode
        self.sampleRate = sampleRate
        self.frames = frames
        self.stems = stems
        self.multichannel = multichannel
    }

    /// Writes the document to `folder/stems.json` (through a temporary name and a rename).
    public func write(toFolder folder: String) throws(RenderError) {
        let path = folder + "/stems.json"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            try TextFile.write(String(decoding: try encoder.encode(self), as: UTF8.self) + "\n", to: path)
        } catch let error as TextFile.Failure {
            throw .cannotWrite(path: path, reason: error.reason)
        } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
    }
}
