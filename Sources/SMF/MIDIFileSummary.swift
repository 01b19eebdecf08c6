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

    /// Digests `file` in one pass over its events (the tempo map and the duration come from the
    /// tempo events that pass collects); `lyrics` keeps at most 200 lines.
    public init(_ file: MIDIFile) {
        var noteTotal = 0
        var eventTotal = 0
        var signatures: [(Int, Int, Int)] = []
        var keys: [(Int, String)] = []
        var tempos: [(tick: Int, microsecondsPerQuarterNote: Int)] = []
        var meters: [(tick: Int, numerator: Int, denominator: Int)] = []
        // Format 2 plays its tracks one after another, each under its own tempos.
        var sequenceSeconds = 0.0
        var markerTotal = 0
        // A karaoke file (a Text event starting "@K" or "@T" anywhere) keeps its lyrics in Text
        // events; which list is kept is decided once the whole file has been seen.
        var isKaraoke = false
        var lyricEvents = (count: 0, lines: [String]())
        var karaokeText = (count: 0, lines: [String]())
        var trackSummaries: [TrackSummary] = []
        trackSummaries.reserveCapacity(file.tracks.count)
        for (index, track) in file.tracks.enumerated() {
            var channels: UInt16 = 0
            var otherChannels = Set<UInt8>()
            var programs: [(UInt8, UInt8)] = []
            var seenPrograms = ProgramSet()
            var notes = 0
            let tempoCountBefore = tempos.count
            for event in track.events {
                switch event.payload {
                case .channel(let message):
                    if let channel = message.channel {
                        // Messages built in code may carry any channel number; files give 0-15.
                        if channel < 16 { channels |= 1 << channel } else { otherChannels.insert(channel) }
                    }
                    if message.isNoteStart { notes += 1 }
                    if case .programChange(let channel, let program) = message,
                        seenPrograms.insert(channel: channel, program: program)
                    {
                        programs.append((channel, program))
                    }
                case .meta(.tempo(let tempo)):
                    if tempo > 0 { tempos.append((event.tick, tempo)) }
                case .meta(.timeSignature(let numerator, let power, _, _)):
                    signatures.append((event.tick, Int(numerator), power < 31 ? 1 << Int(power) : 0))
                    if numerator > 0 && power < 31 { meters.append((event.tick, Int(numerator), 1 << Int(power))) }
                case .meta(.keySignature(let sharps, let minor)):
                    keys.append((event.tick, Self.keyName(sharps: Int(sharps), minor: minor)))
                case .meta(.text(.lyric, let bytes)):
                    lyricEvents.count += 1
                    if lyricEvents.lines.count < 200 { lyricEvents.lines.append(MIDIFile.MetaEvent.decodeText(bytes)) }
                case .meta(.text(.text, let bytes)):
                    if bytes.first == UInt8(ascii: "@") {
                        if bytes.count >= 2 && (bytes[1] == UInt8(ascii: "K") || bytes[1] == UInt8(ascii: "T")) {
                            isKaraoke = true
                        }
                    } else {
                        karaokeText.count += 1
                        if karaokeText.lines.count < 200 {
                            karaokeText.lines.append(MIDIFile.MetaEvent.decodeText(bytes))
                        }
                    }
                case .meta(.text(.marker, _)), .meta(.text(.cuePoint, _)):
                    markerTotal += 1
                default:
                    break
                }
            }
            noteTotal += notes
            eventTotal += track.events.count
            if file.format == .multiSequence {
                let own = TempoMap(division: file.division, tempos: Array(tempos[tempoCountBefore...]))
                sequenceSeconds += own.seconds(forTick: track.length)
            }
            trackSummaries.append(
                TrackSummary(
                    index: index, name: track.name,
                    channels: (UInt8(0)..<16).filter { channels & (1 << $0) != 0 } + otherChannels.sorted(),
                    programs: programs, noteCount: notes, eventCount: track.events.count))
        }
        let map = TempoMap(division: file.division, tempos: tempos, meters: meters)
        trackCount = file.tracks.count
        noteCount = noteTotal
        eventCount = eventTotal
        lengthInTicks = file.lengthInTicks
        durationSeconds = file.format == .multiSequence ? sequenceSeconds : map.seconds(forTick: lengthInTicks)
        tempoChanges = map.tempoChanges
        timeSignatures = signatures.sorted { $0.0 < $1.0 }.map { (tick: $0.0, numerator: $0.1, denominator: $0.2) }
        keySignatures = keys.sorted { $0.0 < $1.0 }.map { (tick: $0.0, name: $0.1) }
        tracks = trackSummaries
        // Karaoke lyrics are the Text events after the headers, plus any Lyric events.
        lyricCount = isKaraoke ? lyricEvents.count + karaokeText.count : lyricEvents.count
        lyrics = isKaraoke ? karaokeText.lines : lyricEvents.lines
        markerCount = markerTotal
    }

    /// "C major", "F♯ minor", "B♭ major"; out-of-range values are named by their numbers.
    public static func keyName(sharps: Int, minor: Bool) -> String {
        let majors = ["C♭", "G♭", "D♭", "A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯"]
        let minors = ["A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯", "G♯", "D♯", "A♯"]
        guard (-7...7).contains(sharps) else { return "\(sharps) sharps \(minor ? "minor" : "major")" }
        return (minor ? minors : majors)[sharps + 7] + (minor ? " minor" : " major")
    }

    /// The (channel, program) pairs seen so far: 16 × 128 bits.
    private struct ProgramSet {
        private var words = [UInt64](repeating: 0, count: 32)

        /// Adds the pair; true when it was not there before.
        mutating func insert(channel: UInt8, program: UInt8) -> Bool {
            let bit = Int(channel & 0x0F) << 7 | Int(program & 0x7F)
            let mask: UInt64 = 1 << UInt64(bit & 63)
            if words[bit >> 6] & mask != 0 { return false }
            words[bit >> 6] |= mask
            return true
        }
    }
}
