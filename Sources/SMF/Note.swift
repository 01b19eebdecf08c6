import MIDICore

/// A sounding note: a note-on paired with its note-off.
public struct Note: Hashable, Sendable {
    /// The MIDI channel, 0-15.
    public var channel: UInt8
    /// The MIDI note number, 0-127 (60 is middle C).
    public var key: UInt8
    /// The note-on's velocity, 1-127.
    public var velocity: UInt8
    /// The note-off's velocity (0 when it was a note-on with velocity 0 or the note was unterminated).
    public var releaseVelocity: UInt8
    /// The tick of the note-on.
    public var startTick: Int
    /// The tick of the note-off that ended the note, or the track's last tick when none came; equal
    /// to `startTick` for a note of no length.
    public var endTick: Int
    /// True when no note-off came and the note was closed at the end of its track.
    public var isUnterminated: Bool
}

extension MIDIFile.Track {
    /// Pairs note-ons with note-offs (a note-on of velocity 0 is a note-off). Overlapping notes of
    /// the same key and channel end first-in, first-out; notes still sounding at the end of the
    /// track are closed at its last tick.
    ///
    /// A message built in code may hold a channel above 15 or a key above 127, which MIDI cannot
    /// carry: it is no note, and is left out rather than counted as another channel or key (writing
    /// the file refuses it with `MIDIFileError.valueOutOfRange`; `MIDIMessage.validated()` finds it).
    public func notes() -> [Note] {
        var notes: [Note] = []
        // Open notes per channel × key, as indices into `notes`, oldest first; made at the first
        // note (a conductor track has none).
        var open: [[Int]] = []
        var openCount = 0
        for event in events {
            guard case .channel(let message) = event.payload else { continue }
            switch message {
            case .noteOn(let channel, let key, _) where channel > 15 || key > 127,
                .noteOff(let channel, let key, _) where channel > 15 || key > 127:
                continue
            case .noteOn(let channel, let key, let velocity) where velocity > 0:
                if open.isEmpty { open = [[Int]](repeating: [], count: 16 * 128) }
                open[Int(channel) * 128 + Int(key)].append(notes.count)
                openCount += 1
                notes.append(
                    Note(
                        channel: channel, key: key, velocity: velocity, releaseVelocity: 0, startTick: event.tick,
                        endTick: event.tick, isUnterminated: false))
            case .noteOn(let channel, let key, _), .noteOff(let channel, let key, _):
                let slot = Int(channel) * 128 + Int(key)
                guard !open.isEmpty, !open[slot].isEmpty else { continue }
                let index = open[slot].removeFirst()
                openCount -= 1
                notes[index].endTick = event.tick
                if case .noteOff(_, _, let velocity) = message { notes[index].releaseVelocity = velocity }
            default:
                continue
            }
        }
        if openCount > 0 {
            let end = length
            for slot in open where !slot.isEmpty {
                for index in slot {
                    notes[index].endTick = end
                    notes[index].isUnterminated = true
                }
            }
        }
        return notes
    }
}

extension MIDIFile {
    /// Note-ons with a velocity above 0, over all tracks.
    public var noteCount: Int {
        tracks.reduce(0) { total, track in
            total
                + track.events.reduce(0) { count, event in
                    if case .channel(let message) = event.payload, message.isNoteStart { return count + 1 }
                    return count
                }
        }
    }
}
