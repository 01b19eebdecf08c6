import Foundation

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

    private enum CodingKeys: String, CodingKey {
        case file, kind, name, tracks, trackNames, channels, programs, family, notes, loudness, truePeak
    }

    /// As `stems.json` has it: loudness and true peak to 0.01, null when silent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(kind, forKey: .kind)
        try container.encode(name, forKey: .name)
        try container.encode(tracks, forKey: .tracks)
        try container.encode(trackNames, forKey: .trackNames)
        try container.encode(channels, forKey: .channels)
        try container.encode(programs, forKey: .programs)
        try container.encode(family, forKey: .family)
        try container.encode(notes, forKey: .notes)
        for (value, key) in [(loudness, CodingKeys.loudness), (truePeak, .truePeak)] {
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
    public var mode: StemMode
    public var sampleRate: Double
    /// The length of every stem (they all start on the same frame).
    public var frames: Int
    /// The mix first, then one entry per stem.
    public var stems: [StemInfo]

    public init(input: String, mode: StemMode, sampleRate: Double, frames: Int, stems: [StemInfo]) {
        self.input = input
        self.mode = mode
        self.sampleRate = sampleRate
        self.frames = frames
        self.stems = stems
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
