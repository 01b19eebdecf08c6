import AudioGraph
import MIDICore
import SMF

/// A sequence ready to play: the MIDI of a file as tracks of timed messages, with its tempo map.
///
/// Built from a `MIDIFile`: channel messages and complete SysEx messages are kept (meta events
/// are read into the tempo map and the lyrics), events are ordered so that at equal ticks
/// note-offs come first and note-ons last, and a format-2 file's sequences are laid end to end.
public final class MusicSequence: @unchecked Sendable {
    /// One message at a tick.
    public struct TimedMessage: Hashable, Sendable {
        /// Ticks from the start of the sequence (a format-2 file's later sequences are offset to follow
        /// the earlier ones).
        public var tick: Int
        /// A channel message, or a complete SysEx message (its bytes between `F0` and `F7`).
        public var message: MIDIMessage
    }

    /// One track of the file: its messages in playing order, with their times in seconds.
    public final class Track: @unchecked Sendable {
        /// The track's name, from a track-name meta event at tick 0, or nil.
        public let name: String?
        /// The track's messages in playing order: by tick, and at equal ticks note-offs first, note-ons
        /// last, file order otherwise.
        public let events: [TimedMessage]
        /// Each event's time in seconds from the start, through the tempo map.
        public let eventSeconds: [Double]
        /// The events' indices in the order the file had them (which may differ at equal ticks).
        public let fileOrder: [Int32]
        /// Where the track's MIDI goes (nil: the player's default destination). Set it before
        /// the player is created.
        public var destination: (any MIDIReceivingNode)?

        init(name: String?, events: [TimedMessage], fileOrder: [Int32], tempoMap: TempoMap) {
            self.name = name
            self.events = events
            self.fileOrder = fileOrder
            self.eventSeconds = events.map { tempoMap.seconds(forTick: $0.tick) }
        }

        /// The track with only the events `isIncluded` accepts (file order kept).
        func filter(_ isIncluded: (TimedMessage) -> Bool) -> Track {
            var newIndex = [Int32](repeating: -1, count: events.count)
            var kept: [TimedMessage] = []
            var keptSeconds: [Double] = []
            for (index, event) in events.enumerated() where isIncluded(event) {
                newIndex[index] = Int32(kept.count)
                kept.append(event)
                keptSeconds.append(eventSeconds[index])
            }
            let order = fileOrder.compactMap { newIndex[Int($0)] >= 0 ? newIndex[Int($0)] : nil }
            let track = Track(name: name, events: kept, eventSeconds: keptSeconds, fileOrder: order)
            track.destination = destination
            return track
        }

        /// The track with `more` events after its own (none earlier than its last), in that order.
        func appending(_ more: [TimedMessage], tempoMap: TempoMap) -> Track {
            let track = Track(
                name: name, events: events + more,
                eventSeconds: eventSeconds + more.map { tempoMap.seconds(forTick: $0.tick) },
                fileOrder: fileOrder + (events.count..<events.count + more.count).map { Int32($0) })
            track.destination = destination
            return track
        }

        private init(name: String?, events: [TimedMessage], eventSeconds: [Double], fileOrder: [Int32]) {
            self.name = name
            self.events = events
            self.eventSeconds = eventSeconds
            self.fileOrder = fileOrder
        }
    }

    /// The file's tracks, in file order.
    public let tracks: [Track]
    /// Converts ticks to seconds and beats, from the tempo and time-signature events of every track.
    public let tempoMap: TempoMap
    /// The tick where the last track ends.
    public let lengthInTicks: Int
    /// Lyric and karaoke text events as (tick, text).
    public let lyrics: [(tick: Int, text: String)]

    /// Builds the sequence from a parsed file; it does not fail. Meta events other than tempo, time
    /// signature and lyrics (or karaoke text) are dropped, as are SysEx messages never completed.
    public init(file: MIDIFile) {
        var sortedTracks: [(String?, [TimedMessage], [Int32])] = []
        let isKaraoke = file.tracks.contains { track in
            track.events.contains {
                if case .meta(.text(.text, let bytes)) = $0.payload {
                    return bytes.starts(with: Array("@KMIDI".utf8)) || bytes.starts(with: Array("@T".utf8))
                }
                return false
            }
        }
        var offset = 0
        var shiftedTempo: [(tick: Int, microsecondsPerQuarterNote: Int)] = []
        var meters: [(tick: Int, numerator: Int, denominator: Int)] = []
        var lyricList: [(Int, String)] = []
        var length = 0
        for track in file.tracks {
            var events: [(TimedMessage, Int, Int)] = []  // message, order class, index
            var pendingSysEx: [UInt8]? = nil
            for (index, event) in track.events.enumerated() {
                let tick = event.tick + offset
                switch event.payload {
                case .channel(let message):
                    events.append((TimedMessage(tick: tick, message: message), Self.orderClass(message), index))
                case .sysEx(let data):
                    if data.last == 0xF7 {
                        events.append(
                            (TimedMessage(tick: tick, message: .systemExclusive(Array(data.dropLast()))), 1, index))
                    } else {
                        pendingSysEx = data
                    }
                case .escape(let data):
                    if var partial = pendingSysEx {
                        partial += data
                        if partial.last == 0xF7 {
                            events.append(
                                (
                                    TimedMessage(tick: tick, message: .systemExclusive(Array(partial.dropLast()))), 1,
                                    index
                                ))
                            pendingSysEx = nil
                        } else {
                            pendingSysEx = partial
                        }
                    }
                case .meta(.tempo(let tempo)) where tempo > 0:
                    shiftedTempo.append((tick, tempo))
                case .meta(.timeSignature(let numerator, let power, _, _)) where numerator > 0 && power < 31:
                    meters.append((tick, Int(numerator), 1 << Int(power)))
                case .meta(.text(.lyric, let bytes)):
                    lyricList.append((tick, MIDIFile.MetaEvent.decodeText(bytes)))
                case .meta(.text(.text, let bytes)) where isKaraoke && bytes.first != UInt8(ascii: "@"):
                    // .kar files keep their syllables in Text events ("\" starts a verse, "/" a line).
                    var text = MIDIFile.MetaEvent.decodeText(bytes)
                    if text.first == "\\" || text.first == "/" { text = " " + text.dropFirst() }
                    lyricList.append((tick, text))
                default:
                    break
                }
            }
            events.sort { ($0.0.tick, $0.1, $0.2) < ($1.0.tick, $1.1, $1.2) }
            let byFile = events.indices.sorted { (events[$0].0.tick, events[$0].2) < (events[$1].0.tick, events[$1].2) }
            sortedTracks.append((track.name, events.map(\.0), byFile.map { Int32($0) }))
            let end = track.length + offset
            length = max(length, end)
            if file.format == .multiSequence { offset = end }
        }
        let map = TempoMap(division: file.division, tempos: shiftedTempo, meters: meters)
        self.tempoMap = map
        self.tracks = sortedTracks.map { Track(name: $0.0, events: $0.1, fileOrder: $0.2, tempoMap: map) }
        self.lengthInTicks = length
        self.lyrics = lyricList.sorted { $0.0 < $1.0 }.map { (tick: $0.0, text: $0.1) }
    }

    private init(tracks: [Track], tempoMap: TempoMap, lengthInTicks: Int, lyrics: [(tick: Int, text: String)]) {
        self.tracks = tracks
        self.tempoMap = tempoMap
        self.lengthInTicks = lengthInTicks
        self.lyrics = lyrics
    }

    /// A copy that keeps only the channel messages on `channels` (0-based); SysEx, the tempo map,
    /// the lyrics and the length stay as they are, so the copy ends when the original does. A
    /// render can then split a song's channels over several synthesizers whose outputs sum.
    public func keepingChannels(_ channels: Set<UInt8>) -> MusicSequence {
        let tracks = tracks.map { track in
            track.filter { event in event.message.channel.map { channels.contains($0) } ?? true }
        }
        return MusicSequence(tracks: tracks, tempoMap: tempoMap, lengthInTicks: lengthInTicks, lyrics: lyrics)
    }

    /// What a note is, for choosing notes (`keepingNotes(where:)`).
    public struct NoteContext: Hashable, Sendable {
        /// The index of the note's track.
        public var track: Int
        /// 0-based.
        public var channel: UInt8
        /// The channel's program when the note starts (0 until a program change).
        public var program: UInt8
        /// The note's key, 0–127, as the file has it (before any transpose).
        public var key: UInt8
    }

    /// A copy that keeps only the notes `isIncluded` accepts, and every other event (programs,
    /// controllers, pitch bends, SysEx, on every channel): the synthesizers playing the copies
    /// are in the same state as one playing the whole, so the copies of a partition of the notes
    /// sum to the whole. A note's end (and its key pressure) goes with its start.
    public func keepingNotes(where isIncluded: (NoteContext) -> Bool) -> MusicSequence {
        // Every event in playing order: tick, then note-offs, others, note-ons, then track.
        var order: [(tick: Int, rank: Int, track: Int, index: Int)] = []
        for (trackIndex, track) in tracks.enumerated() {
            for (index, event) in track.events.enumerated() {
                order.append((event.tick, Self.orderClass(event.message), trackIndex, index))
            }
        }
        order.sort { ($0.tick, $0.rank, $0.track, $0.index) < ($1.tick, $1.rank, $1.track, $1.index) }
        var program = [UInt8](repeating: 0, count: 16)
        // Per channel and key, the decisions of the notes sounding (a key may be struck again
        // before its end: first in, first out).
        var sounding = [[Bool]](repeating: [], count: 16 * 128)
        var dropped = tracks.map { [Bool](repeating: false, count: $0.events.count) }
        for entry in order {
            switch tracks[entry.track].events[entry.index].message {
            case .programChange(let channel, let value):
                program[Int(channel & 0x0F)] = value
            case .noteOn(let channel, let note, let velocity) where velocity > 0:
                let channel = channel & 0x0F
                let keep = isIncluded(
                    NoteContext(track: entry.track, channel: channel, program: program[Int(channel)], key: note))
                sounding[Int(channel) * 128 + Int(note)].append(keep)
                dropped[entry.track][entry.index] = !keep
            case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                let slot = Int(channel & 0x0F) * 128 + Int(note)
                if !sounding[slot].isEmpty { dropped[entry.track][entry.index] = !sounding[slot].removeFirst() }
            case .polyphonicKeyPressure(let channel, let note, _):
                let slot = Int(channel & 0x0F) * 128 + Int(note)
                if let keep = sounding[slot].first { dropped[entry.track][entry.index] = !keep }
            default:
                break
            }
        }
        let kept = tracks.enumerated().map { trackIndex, track in
            var position = 0
            return track.filter { _ in
                defer { position += 1 }
                return !dropped[trackIndex][position]
            }
        }
        return MusicSequence(tracks: kept, tempoMap: tempoMap, lengthInTicks: lengthInTicks, lyrics: lyrics)
    }

    /// A copy that ends at `seconds` from the start: the events before it are kept, the notes
    /// still sounding then end there (and a held sustain pedal is released), and the copy's length
    /// is that point (to the next tick). The tempo map and the lyrics stay. An end at or past the
    /// sequence's own end returns the sequence unchanged; one at or before 0 keeps nothing.
    public func ending(atSeconds seconds: Double) -> MusicSequence {
        guard seconds < durationSeconds else { return self }
        let endTick = max(0, Int(tempoMap.tick(forSeconds: max(0, seconds)).rounded(.up)))
        let cut = tracks.map { track -> Track in
            // Per channel and key, the notes sounding (a key struck again before its end counts twice).
            var sounding = [Int](repeating: 0, count: 16 * 128)
            var pedalDown = [Bool](repeating: false, count: 16)
            var kept = track.filter { event in
                guard event.tick < endTick || (event.tick == endTick && event.message.isNoteEnd) else { return false }
                switch event.message {
                case .noteOn(let channel, let note, let velocity) where velocity > 0:
                    sounding[Int(channel & 0x0F) * 128 + Int(note)] += 1
                case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                    let slot = Int(channel & 0x0F) * 128 + Int(note)
                    sounding[slot] = max(0, sounding[slot] - 1)
                case .controlChange(let channel, 64, let value):
                    pedalDown[Int(channel & 0x0F)] = value >= 64
                default:
                    break
                }
                return true
            }
            var ends: [TimedMessage] = []
            for slot in sounding.indices where sounding[slot] > 0 {
                let message = MIDIMessage.noteOff(channel: UInt8(slot / 128), note: UInt8(slot % 128), velocity: 0)
                ends += Array(repeating: TimedMessage(tick: endTick, message: message), count: sounding[slot])
            }
            for channel in pedalDown.indices where pedalDown[channel] {
                ends.append(
                    TimedMessage(
                        tick: endTick, message: .controlChange(channel: UInt8(channel), controller: 64, value: 0)))
            }
            if !ends.isEmpty { kept = kept.appending(ends, tempoMap: tempoMap) }
            return kept
        }
        return MusicSequence(
            tracks: cut, tempoMap: tempoMap, lengthInTicks: min(lengthInTicks, endTick),
            lyrics: lyrics.filter { $0.tick < endTick })
    }

    /// Reads and builds a sequence from a file on disk (lenient reader; bounded, and cancellable
    /// while it waits for a pipe, as `MIDIFile.read(path:strict:threads:isCancelled:)` is).
    public convenience init(path: String, isCancelled: (() -> Bool)? = nil) throws(MIDIFileError) {
        self.init(file: try MIDIFile.read(path: path, isCancelled: isCancelled).file)
    }

    /// Note-offs sort first at a tick, note-ons last, everything else (programs, controllers)
    /// between, so that a note restarted at the same tick is not cut by its own note-off.
    package static func orderClass(_ message: MIDIMessage) -> Int {
        if message.isNoteEnd { return 0 }
        if message.isNoteStart { return 2 }
        return 1
    }

    /// The sequence's length in seconds: where the last track ends, through the tempo map.
    public var durationSeconds: Double { tempoMap.seconds(forTick: lengthInTicks) }

    /// The tempo at the start, in beats per minute (120 when the file sets none).
    public var tempo: Double { 60_000_000 / Double(tempoMap.microsecondsPerQuarterNote(atTick: 0)) }

    /// Every tempo of the song, with where it starts: seconds and beats per minute.
    public var tempos: [(seconds: Double, beatsPerMinute: Double)] {
        let changes = tempoMap.tempoChanges
        guard !changes.isEmpty else { return [(0, tempo)] }
        return changes.map {
            (tempoMap.seconds(forTick: Double($0.tick)), 60_000_000 / Double($0.microsecondsPerQuarterNote))
        }
    }

    /// The notes the song plays (note-ons with a velocity).
    public var noteCount: Int {
        tracks.reduce(0) { count, track in count + track.events.filter(\.message.isNoteStart).count }
    }

    /// Each track's name, in order (nil for a track without one).
    public var trackNames: [String?] { tracks.map(\.name) }
    /// The sequence's length in quarter-note beats (for an SMPTE-timed file, beats at 120 BPM).
    public var lengthInBeats: Double { tempoMap.beats(forTick: Double(lengthInTicks)) }

    /// Seconds from the start at `beats` quarter notes, through the tempo map (for an SMPTE-timed file,
    /// beats at 120 BPM: half a second each). The inverse of `beats(forSeconds:)`.
    public func seconds(forBeats beats: Double) -> Double {
        guard let ticksPerQuarterNote = tempoMap.division.ticksPerQuarterNote else {
            // An SMPTE-timed file has no tempo: the tempo map counts its beats at 120 BPM.
            return beats * 60 / 120
        }
        return tempoMap.seconds(forTick: beats * Double(ticksPerQuarterNote))
    }

    /// Quarter-note beats at `seconds` from the start, through the tempo map (for an SMPTE-timed file,
    /// beats at 120 BPM). The inverse of `seconds(forBeats:)`.
    public func beats(forSeconds seconds: Double) -> Double {
        tempoMap.beats(forTick: tempoMap.tick(forSeconds: seconds))
    }
}
