import MIDICore

extension MIDIFile {
    /// The file's bytes: `MThd` and one `MTrk` per track, minimal variable-length quantities, an
    /// End of Track added to any track that lacks one, and (by default) running status for
    /// consecutive channel messages of the same status. Meta and SysEx events end running status,
    /// as the SMF specification asks.
    ///
    /// Writing any file the reader returned and reading the result gives an equal `MIDIFile`.
    ///
    /// A message is written as it is or not at all: one holding a number MIDI 1.0 cannot carry
    /// (a channel above 15, a note above 127, …) throws `MIDIFileError.valueOutOfRange`, naming its
    /// track, its event and the field, rather than being written as another message.
    public func serialized(runningStatus: Bool = true) throws(MIDIFileError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(14 + tracks.reduce(0) { $0 + 8 + $1.events.count * 4 })
        out.append(contentsOf: "MThd".utf8)
        appendU32(6, to: &out)
        appendU16(UInt16(format.rawValue), to: &out)
        appendU16(UInt16(tracks.count), to: &out)
        appendU16(division.rawValue, to: &out)
        for (trackIndex, track) in tracks.enumerated() {
            out.append(contentsOf: "MTrk".utf8)
            let lengthAt = out.count
            appendU32(0, to: &out)
            let start = out.count
            var encoder = MIDIStreamEncoder(usesRunningStatus: runningStatus)
            var previous = 0
            var ended = false
            for (eventIndex, event) in track.events.enumerated() {
                let delta = max(0, event.tick - previous)
                previous = max(previous, event.tick)
                appendVariableLength(delta, to: &out)
                switch event.payload {
                case .channel(let message):
                    do throws(MIDIValueError) {
                        try encoder.encode(message, into: &out)
                    } catch {
                        throw .valueOutOfRange(track: trackIndex, event: eventIndex, error)
                    }
                case .meta(let meta):
                    encoder.reset()
                    out.append(0xFF)
                    out.append(meta.type)
                    let data = meta.data
                    appendVariableLength(data.count, to: &out)
                    out.append(contentsOf: data)
                    if case .endOfTrack = meta { ended = true }
                case .sysEx(let data), .escape(let data):
                    encoder.reset()
                    if case .sysEx = event.payload { out.append(0xF0) } else { out.append(0xF7) }
                    appendVariableLength(data.count, to: &out)
                    out.append(contentsOf: data)
                }
                if ended { break }
            }
            if !ended { out.append(contentsOf: [0x00, 0xFF, 0x2F, 0x00] as [UInt8]) }
            let length = out.count - start
            for index in 0..<4 { out[lengthAt + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
        }
        return out
    }
}

extension MIDIFile.MetaEvent {
    /// The meta event's data bytes as written in a file.
    public var data: [UInt8] {
        switch self {
        case .sequenceNumber(let number): return number.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
        case .text(_, let bytes), .sequencerSpecific(let bytes), .unknown(_, let bytes): return bytes
        case .channelPrefix(let value), .port(let value): return [value]
        case .endOfTrack: return []
        case .tempo(let tempo): return [UInt8(tempo >> 16 & 0xFF), UInt8(tempo >> 8 & 0xFF), UInt8(tempo & 0xFF)]
        case .smpteOffset(let hours, let minutes, let seconds, let frames, let subframes):
            return [hours, minutes, seconds, frames, subframes]
        case .timeSignature(let numerator, let power, let clocks, let thirtySeconds):
            return [numerator, power, clocks, thirtySeconds]
        case .keySignature(let sharps, let minor): return [UInt8(bitPattern: sharps), minor ? 1 : 0]
        }
    }
}

func appendU32(_ value: UInt32, to out: inout [UInt8]) {
    out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

func appendU16(_ value: UInt16, to out: inout [UInt8]) {
    out += [UInt8(value >> 8), UInt8(value & 0xFF)]
}

/// Appends `value` as a minimal variable-length quantity (values above 0x0FFFFFFF use more than
/// the four bytes SMF allows; the reader accepts them back with a diagnostic).
func appendVariableLength(_ value: Int, to out: inout [UInt8]) {
    var groups = 1
    while groups < 10 && value >> (7 * groups) != 0 { groups += 1 }
    for group in stride(from: groups - 1, through: 0, by: -1) {
        let bits = UInt8(value >> (7 * group) & 0x7F)
        out.append(group == 0 ? bits : bits | 0x80)
    }
}
