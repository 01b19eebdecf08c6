import MIDICore

/// What `pianola info` shows about a file: a digest of its tracks, tempo, meter and text.
public struct MIDIFileSummary: Sendable {
    /// A digest of one track.
    public struct TrackSummary: Sendable {
        /// The track's position in the file, 0-based.
        public var index: Int
        /// The track's name (its first Sequence/Track Name event at tick 0), nil when it has none.
        public var name: String?
        /// Channels (0-15) that carry messages in this track.
        public var channels: [UInt8]
        /// Program changes as (channel, program), in order of first appearance.
        public var programs: [(channel: UInt8, program: UInt8)]
        /// Note-ons with a velocity above 0 in this track.
        public var noteCount: Int
        /// Every event in this track, meta and SysEx events and End of Track included.
        public var eventCount: Int
    }

    /// The number of tracks in the file.
    public var trackCount: Int
    /// Note-ons with a velocity above 0, over all tracks.
    public var noteCount: Int
    /// Events of every kind over all tracks, End of Track events included.
    public var eventCount: Int
    /// The playing time in seconds: to the end of the longest track, or the sequences one after
    /// another in a format 2 file (`MIDIFile.durationSeconds`).
    public var durationSeconds: Double
    /// The tick at which the longest track ends.
    public var lengthInTicks: Int
    /// The tempo map's segments in tick order: at least one, starting at tick 0 (at 120 BPM when the
    /// file sets no tempo there).
    public var tempoChanges: [TempoMap.TempoChange]
    /// Time signatures as (tick, numerator, denominator).
    public var timeSignatures: [(tick: Int, numerator: Int, denominator: Int)]
    /// Key signatures as (tick, name), e.g. "E♭ major".
    public var keySignatures: [(tick: Int, name: String)]
    /// One summary per track, in file order.
    public var tracks: [TrackSummary]
    /// Lyric events over all tracks, plus the Text events that carry the lyrics of a karaoke (`.kar`)
    /// file.
    public var lyricCount: Int
    /// Marker and Cue Point events over all tracks.
    public var markerCount: Int
    /// The first lines of lyrics (`.kar` files keep them in Text events after an `@T` header).
    public var lyrics: [String]

    /// Digests `file` in one pass over its events (plus its tempo map); `lyrics` keeps at most 200
    /// lines.
    public init(_ file: MIDIFile) {
        let map = file.tempoMap
        var noteTotal = 0
        var eventTotal = 0
        var signatures: [(Int, Int, Int)] = []
        var keys: [(Int, String)] = []
        var lyricTotal = 0
        var markerTotal = 0
        var lyricLines: [String] = []
        var trackSummaries: [TrackSummary] = []
        let isKaraoke = file.tracks.contains { track in
            track.events.contains {
                if case .meta(.text(.text, let bytes)) = $0.payload {
                    return bytes.starts(with: Array("@K".utf8)) || bytes.starts(with: Array("@T".utf8))
                } else {
                    return false
                }
            }
        }
        for (index, track) in file.tracks.enumerated() {
            var channels = Set<UInt8>()
            var programs: [(UInt8, UInt8)] = []
            var notes = 0
            for event in track.events {
                switch event.payload {
                case .channel(let message):
                    if let channel = message.channel { channels.insert(channel) }
                    if message.isNoteStart { notes += 1 }
                    if case .programChange(let channel, let program) = message,
                        !programs.contains(where: { $0 == (channel, program) })
                    {
                        programs.append((channel, program))
                    }
                case .meta(.timeSignature(let numerator, let power, _, _)):
                    signatures.append((event.tick, Int(numerator), power < 31 ? 1 << Int(power) : 0))
                case .meta(.keySignature(let sharps, let minor)):
                    keys.append((event.tick, Self.keyName(sharps: Int(sharps), minor: minor)))
                case .meta(.text(.lyric, let bytes)):
                    lyricTotal += 1
                    if !isKaraoke && lyricLines.count < 200 { lyricLines.append(MIDIFile.MetaEvent.decodeText(bytes)) }
                case .meta(.text(.text, let bytes)) where isKaraoke && bytes.first != UInt8(ascii: "@"):
                    lyricTotal += 1
                    if lyricLines.count < 200 { lyricLines.append(MIDIFile.MetaEvent.decodeText(bytes)) }
                case .meta(.text(.marker, _)), .meta(.text(.cuePoint, _)):
                    markerTotal += 1
                default:
                    break
                }
            }
            noteTotal += notes
            eventTotal += track.events.count
            trackSummaries.append(
                TrackSummary(
                    index: index, name: track.name, channels: channels.sorted(), programs: programs, noteCount: notes,
                    eventCount: track.events.count))
        }
        trackCount = file.tracks.count
        noteCount = noteTotal
        eventCount = eventTotal
        durationSeconds = file.durationSeconds
        lengthInTicks = file.lengthInTicks
        tempoChanges = map.tempoChanges
        timeSignatures = signatures.sorted { $0.0 < $1.0 }.map { (tick: $0.0, numerator: $0.1, denominator: $0.2) }
        keySignatures = keys.sorted { $0.0 < $1.0 }.map { (tick: $0.0, name: $0.1) }
        tracks = trackSummaries
        lyricCount = lyricTotal
        markerCount = markerTotal
        lyrics = lyricLines
    }

    /// "C major", "F♯ minor", "B♭ major"; out-of-range values are named by their numbers.
    public static func keyName(sharps: Int, minor: Bool) -> String {
        let majors = ["C♭", "G♭", "D♭", "A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯"]
        let minors = ["A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯", "G♯", "D♯", "A♯"]
        guard (-7...7).contains(sharps) else { return "\(sharps) sharps \(minor ? "minor" : "major")" }
        return (minor ? minors : majors)[sharps + 7] + (minor ? " minor" : " major")
    }
}
