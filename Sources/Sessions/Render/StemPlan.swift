import MIDICore
import Sequencer

/// The stems a sequence splits into, each with what it holds and the sequence its synthesizer
/// plays (the notes of its track, channel or instrument family, with every controller).
struct StemPlan {
    var stems: [(info: StemInfo, sequence: MusicSequence)]

    init(_ sequence: MusicSequence, mode: StemMode, fileExtension: String) {
        // Every note once, with its stem key.
        var notes: [(key: Int, context: MusicSequence.NoteContext)] = []
        _ = sequence.keepingNotes { context in
            let key: Int
            switch mode {
            case .track: key = context.track
            case .channel: key = Int(context.channel)
            case .program: key = context.channel == 9 ? 16 : Int(context.program / 8)
            }
            notes.append((key, context))
            return false
        }
        var plan: [(info: StemInfo, sequence: MusicSequence)] = []
        for key in Set(notes.map(\.key)).sorted() {
            let mine = notes.filter { $0.key == key }.map(\.context)
            let tracks = Array(Set(mine.map(\.track))).sorted()
            let trackNames = tracks.compactMap { sequence.tracks[$0].name.map(Self.trimmed) }.filter { !$0.isEmpty }
            let channels = Array(Set(mine.map(\.channel))).sorted()
            let programs = Array(Set(mine.map(\.program))).sorted()
            let name: String
            let kind: String
            var family: String?
            switch mode {
            case .track:
                kind = "track"
                // Tracks are counted as `pianola info` and stems.json's `tracks` count them: from 0,
                // the first track chunk (a format 1 file's tempo track) being track 0.
                name = trackNames.first ?? "track \(key)"
            case .channel:
                kind = "channel"
                name = "channel \(key + 1)"
            case .program:
                kind = "family"
                name = key == 16 ? "drums" : GeneralMIDI.familyNames[key]
                family = name
            }
            if mode != .program, channels.count == 1 {
                family =
                    channels == [9]
                    ? "drums" : programs.count == 1 ? GeneralMIDI.familyNames[Int(programs[0]) / 8] : nil
            }
            // Files numbered as the stem's name numbers it: track-01 is track 1, channel-01 channel 1.
            let number = mode == .track ? key : key + 1
            let stem = number < 10 ? "0\(number)" : "\(number)"
            let slug = Self.safeName(name)
            let file: String
            switch mode {
            case .track: file = "track-\(stem)-\(slug).\(fileExtension)"
            case .channel: file = "channel-\(stem).\(fileExtension)"
            case .program: file = "\(slug).\(fileExtension)"
            }
            let info = StemInfo(
                file: file, kind: kind, name: name, tracks: tracks, trackNames: trackNames, channels: channels,
                programs: programs, family: family, notes: mine.count, loudness: -.infinity, truePeak: -.infinity)
            let filtered = sequence.keepingNotes { context in
                switch mode {
                case .track: return context.track == key
                case .channel: return Int(context.channel) == key
                case .program: return (context.channel == 9 ? 16 : Int(context.program / 8)) == key
                }
            }
            plan.append((info, filtered))
        }
        stems = plan
    }

    /// Letters, digits and single dashes between them, at most 40 characters: no dash (nor the
    /// name's padding) at either end.
    static func safeName(_ name: String) -> String {
        let mapped = name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        var words: [Substring] = []
        var length = 0
        for word in String(mapped).split(separator: "-") {
            let cut = word.prefix(40 - length - (words.isEmpty ? 0 : 1))
            guard !cut.isEmpty else { break }
            words.append(cut)
            length += cut.count + (words.count > 1 ? 1 : 0)
        }
        return words.isEmpty ? "stem" : words.joined(separator: "-")
    }

    /// `name` without the spaces, NULs and other control characters a MIDI file pads names with.
    static func trimmed(_ name: String) -> String {
        let padding = { (character: Character) in
            character.isWhitespace || character.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control }
        }
        guard let first = name.firstIndex(where: { !padding($0) }), let last = name.lastIndex(where: { !padding($0) })
        else { return "" }
        return String(name[first...last])
    }
}
