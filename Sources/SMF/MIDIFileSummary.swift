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

    /// The file's format (0, 1 or 2).
    public var format: MIDIFile.Format
    /// The file's time division: ticks per quarter note, or SMPTE frames and ticks per frame.
    public var division: MIDIFile.Division

    /// Digests `file` in one pass over its events (the tempo map and the duration come from the
    /// tempo events that pass collects); `lyrics` keeps at most 200 lines.
    public init(_ file: MIDIFile) {
        let digests = file.tracks.map { track in
            var digest = TrackDigest()
            for event in track.events { digest.append(event) }
            return digest
        }
        self.init(format: file.format, division: file.division, digests: digests)
    }

    /// Puts the tracks' digests together, in file order.
    init(format: MIDIFile.Format, division: MIDIFile.Division, digests: [TrackDigest]) {
        var signatures: [(Int, Int, Int)] = []
        var keys: [(Int, String)] = []
        var tempos: [(tick: Int, microsecondsPerQuarterNote: Int)] = []
        var meters: [(tick: Int, numerator: Int, denominator: Int)] = []
        // Format 2 plays its tracks one after another, each under its own tempos.
        var sequenceSeconds = 0.0
        var lyricEvents = (count: 0, lines: [String]())
        var karaokeText = (count: 0, lines: [String]())
        for digest in digests {
            if format == .multiSequence {
                sequenceSeconds += TempoMap(division: division, tempos: digest.tempos).seconds(forTick: digest.lastTick)
            }
            tempos += digest.tempos
            meters += digest.meters
            signatures += digest.signatures
            keys += digest.keys
            lyricEvents.count += digest.lyricEvents.count
            lyricEvents.lines += digest.lyricEvents.lines.prefix(200 - lyricEvents.lines.count)
            karaokeText.count += digest.karaokeText.count
            karaokeText.lines += digest.karaokeText.lines.prefix(200 - karaokeText.lines.count)
        }
        // A karaoke file (a Text event starting "@K" or "@T" anywhere) keeps its lyrics in Text
        // events, plus any Lyric events.
        let isKaraoke = digests.contains { $0.isKaraoke }
        let map = TempoMap(division: division, tempos: tempos, meters: meters)
        self.format = format
        self.division = division
        trackCount = digests.count
        noteCount = digests.reduce(0) { $0 + $1.notes }
        eventCount = digests.reduce(0) { $0 + $1.eventCount }
        lengthInTicks = digests.map(\.lastTick).max() ?? 0
        durationSeconds = format == .multiSequence ? sequenceSeconds : map.seconds(forTick: lengthInTicks)
        tempoChanges = map.tempoChanges
        timeSignatures = signatures.sorted { $0.0 < $1.0 }.map { (tick: $0.0, numerator: $0.1, denominator: $0.2) }
        keySignatures = keys.sorted { $0.0 < $1.0 }.map { (tick: $0.0, name: $0.1) }
        tracks = digests.enumerated().map { index, digest in
            TrackSummary(
                index: index, name: digest.name,
                channels: (UInt8(0)..<16).filter { digest.channels & (1 << $0) != 0 } + digest.otherChannels.sorted(),
                programs: digest.programs.map { (channel: $0.0, program: $0.1) }, noteCount: digest.notes,
                eventCount: digest.eventCount)
        }
        lyricCount = isKaraoke ? lyricEvents.count + karaokeText.count : lyricEvents.count
        lyrics = isKaraoke ? karaokeText.lines : lyricEvents.lines
        markerCount = digests.reduce(0) { $0 + $1.markers }
    }

    /// "C major", "F♯ minor", "B♭ major"; out-of-range values are named by their numbers.
    public static func keyName(sharps: Int, minor: Bool) -> String {
        let majors = ["C♭", "G♭", "D♭", "A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯"]
        let minors = ["A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯", "G♯", "D♯", "A♯"]
        guard (-7...7).contains(sharps) else { return "\(sharps) sharps \(minor ? "minor" : "major")" }
        return (minor ? minors : majors)[sharps + 7] + (minor ? " minor" : " major")
    }

    /// The (channel, program) pairs seen so far: 16 × 128 bits, allocated at the first pair (most
    /// tracks have none).
    struct ProgramSet: Sendable {
        private var words: [UInt64] = []

        /// Adds the pair; true when it was not there before.
        mutating func insert(channel: UInt8, program: UInt8) -> Bool {
            if words.isEmpty { words = [UInt64](repeating: 0, count: 32) }
            let bit = Int(channel & 0x0F) << 7 | Int(program & 0x7F)
            let mask: UInt64 = 1 << UInt64(bit & 63)
            if words[bit >> 6] & mask != 0 { return false }
            words[bit >> 6] |= mask
            return true
        }
    }
}
