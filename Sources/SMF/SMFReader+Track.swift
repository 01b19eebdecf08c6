import MIDICore

extension SMFReader {
    /// Reads one `MTrk` chunk starting at `chunk`; returns the track and where the next chunk
    /// starts. Tolerates lengths that disagree with the events, truncation, missing End of Track,
    /// bad running status and illegal status bytes (see `MIDIFileDiagnostic.Kind`).
    mutating func readTrack<Sink: TrackSink>(
        index: Int, chunk: Int, fileEnd: Int, into _: Sink.Type = Sink.self
    ) throws(MIDIFileError) -> (Sink, Int) {
        let declaredLength = u32(chunk + 4)
        let contentStart = chunk + 8
        let declaredEnd = contentStart + declaredLength
        if declaredEnd > fileEnd {
            try report(
                .trackLengthTooLong, track: index, at: chunk + 4,
                "track declares \(declaredLength) bytes, \(fileEnd - contentStart) remain")
        }
        var limit = min(declaredEnd, fileEnd)
        // Every event takes at least two bytes, so a sink that stores events need never regrow.
        var events = Sink(maximumEventCount: max(16, (limit - contentStart) / 2 + 1))
        var position = contentStart
        var tick = 0
        var runningStatus: UInt8 = 0
        var runningStatusCancelled = false
        var endOfTrackAt: Int? = nil
        var readPastDeclaredEnd = false
        // Set after resynchronizing onto a status byte: the next event has no delta time.
        var statusPending = false

        let bounds = TrackBounds(index: index, chunk: chunk, declaredEnd: declaredEnd, fileEnd: fileEnd)
        events: while true {
            if position >= limit {
                // The chunk ended without End of Track. If what follows is not a chunk, the events
                // most likely go on past a length field that is too short.
                if position < fileEnd && limit == declaredEnd && declaredLength > 0 && !looksLikeChunkID(at: position) {
                    try report(
                        .trackLengthTooShort, track: index, at: chunk + 4,
                        "track events continue past its declared length of \(declaredLength) bytes")
                    limit = fileEnd
                    readPastDeclaredEnd = true
                    continue
                }
                break
            }
            let eventStart = position
            let readDelta: Int?
            if statusPending {
                readDelta = 0
                statusPending = false
            } else if bytes[position] < 0x80 {
                // Most delta times are one byte.
                readDelta = Int(bytes[position])
                position += 1
            } else {
                readDelta = try readVariableLength(&position, limit: limit, track: index)
            }
            guard let delta = readDelta else {
                if try extendOrReportTruncation(
                    &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: eventStart,
                    "the track ends inside a delta time")
                {
                    continue
                }
                break
            }
            if delta > 1 << 23 {
                try report(.hugeDeltaTime, track: index, at: eventStart, "delta time of \(delta) ticks")
            }
            // Ticks saturate at 2^55, so even absurd files stay within range (and every delta
            // between two events fits the writer's 8-byte quantities).
            tick = min(tick + delta, 1 << 55)
            guard position < limit else {
                if try extendOrReportTruncation(
                    &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: position,
                    "the track ends after a delta time")
                {
                    continue
                }
                break
            }
            let status = bytes[position]
            // The common cases first: a channel message in running status, or with its status
            // byte, with data in range.
            if status < 0x80 && runningStatus != 0 && !runningStatusCancelled {
                let count = runningStatus < 0xC0 || runningStatus >= 0xE0 ? 2 : 1
                if position + count <= limit {
                    let second = count == 2 ? bytes[position + 1] : 0
                    if second < 0x80 {
                        position += count
                        events.appendChannelMessage(tick: tick, status: runningStatus, status, second)
                        continue
                    }
                }
            } else if status >= 0x80 && status < 0xF0 {
                let count = status < 0xC0 || status >= 0xE0 ? 2 : 1
                if position + count < limit {
                    let first = bytes[position + 1]
                    let second = count == 2 ? bytes[position + 2] : 0
                    if first < 0x80 && second < 0x80 {
                        runningStatus = status
                        runningStatusCancelled = false
                        position += 1 + count
                        events.appendChannelMessage(tick: tick, status: status, first, second)
                        continue
                    }
                }
            }
            switch status {
            case 0xFF:
                guard position + 1 < limit else {
                    if try extendOrReportTruncation(
                        &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: position,
                        "the track ends inside a meta event")
                    {
                        continue
                    }
                    break events
                }
                let type = bytes[position + 1]
                position += 2
                guard let data = try readBlock(&position, limit: limit, track: index) else {
                    if try extendOrReportTruncation(
                        &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: eventStart,
                        "the track ends inside a meta event")
                    {
                        continue
                    }
                    break events
                }
                if type == 0x2F {
                    if !data.isEmpty {
                        try report(
                            .invalidMetaEventLength, track: index, at: eventStart,
                            "End of Track with \(data.count) data bytes")
                    }
                    events.append(MIDIFile.Event(tick: tick, .meta(.endOfTrack)))
                    endOfTrackAt = position
                    break events
                }
                let meta = try decodeMeta(type: type, data: data, track: index, offset: eventStart)
                events.append(MIDIFile.Event(tick: tick, .meta(meta)))
                runningStatusCancelled = runningStatus != 0
            case 0xF0, 0xF7:
                position += 1
                guard let data = try readBlock(&position, limit: limit, track: index) else {
                    if try extendOrReportTruncation(
                        &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: eventStart,
                        "the track ends inside a SysEx event")
                    {
                        continue
                    }
                    break events
                }
                events.append(MIDIFile.Event(tick: tick, status == 0xF0 ? .sysEx(data) : .escape(data)))
                runningStatusCancelled = runningStatus != 0
            case 0xF1...0xFE:
                let length = MIDIMessage.dataLength(ofStatus: status) ?? 0
                if MIDIMessage.dataLength(ofStatus: status) == nil {
                    try report(
                        .undefinedStatus, track: index, at: position, "undefined status byte \(hex(status)) skipped")
                } else {
                    try report(
                        .illegalSystemMessage, track: index, at: position,
                        "system message \(hex(status)) is not allowed in a MIDI file; skipped")
                }
                position += 1
                var skipped = 0
                while skipped < length && position < limit && bytes[position] < 0x80 {
                    position += 1
                    skipped += 1
                }
            default:
                var messageStatus = status
                if status >= 0x80 {
                    runningStatus = status
                    runningStatusCancelled = false
                    position += 1
                } else if runningStatus != 0 {
                    messageStatus = runningStatus
                    if runningStatusCancelled {
                        try report(
                            .runningStatusAfterMetaOrSysEx, track: index, at: position,
                            "running status \(hex(runningStatus)) used after a meta or SysEx event")
                        runningStatusCancelled = false
                    }
                } else {
                    // Resynchronize on the next status byte, read as an event at this tick.
                    var skipped = position
                    while skipped < limit && bytes[skipped] < 0x80 { skipped += 1 }
                    try report(
                        .dataWithoutRunningStatus, track: index, at: position,
                        "\(skipped - position) data bytes with no running status; skipped")
                    guard skipped < limit else { position = skipped; continue }
                    messageStatus = bytes[skipped]
                    position = skipped
                    if messageStatus >= 0xF0 {
                        // A meta, SysEx or system byte: read it as the next event, at this tick.
                        statusPending = true
                        continue
                    }
                    runningStatus = messageStatus
                    runningStatusCancelled = false
                    position += 1
                }
                let count = messageStatus >= 0xC0 && messageStatus < 0xE0 ? 1 : 2
                guard position + count <= limit else {
                    if try extendOrReportTruncation(
                        &limit, &position, &readPastDeclaredEnd, eventStart, bounds, at: eventStart,
                        "the track ends inside a channel message")
                    {
                        continue
                    }
                    break events
                }
                var first = bytes[position]
                var second = count == 2 ? bytes[position + 1] : 0
                if first >= 0x80 || second >= 0x80 {
                    try report(
                        .invalidDataByte, track: index, at: position,
                        "data byte above 127 in a \(hex(messageStatus)) message; clamped")
                    first = min(first, 0x7F)
                    second = min(second, 0x7F)
                }
                position += count
                events.appendChannelMessage(tick: tick, status: messageStatus, first, second)
            }
        }

        guard let endOfTrack = endOfTrackAt else {
            // Even an empty chunk is reported: every SMF track must end with End of Track.
            try report(.missingEndOfTrack, track: index, at: position, "no End of Track; one was added at tick \(tick)")
            events.append(MIDIFile.Event(tick: events.lastTick, .meta(.endOfTrack)))
            return (
                events,
                readPastDeclaredEnd ? position : max(position, min(declaredEnd, fileEnd))
            )
        }
        var next = declaredEnd
        if readPastDeclaredEnd || declaredEnd > fileEnd {
            next = endOfTrack
        } else if endOfTrack < declaredEnd {
            if matches("MTrk", at: endOfTrack) {
                try report(
                    .trackLengthTooLong, track: index, at: chunk + 4,
                    "track declares \(declaredLength) bytes but ends after \(endOfTrack - contentStart)")
                next = endOfTrack
            } else {
                try report(
                    .dataAfterEndOfTrack, track: index, at: endOfTrack,
                    "\(declaredEnd - endOfTrack) bytes after End of Track, ignored")
            }
        }
        return (events, next)
    }

    struct TrackBounds {
        var index: Int
        var chunk: Int
        var declaredEnd: Int
        var fileEnd: Int
    }

    /// Called where the chunk ends inside an event: if the declared length looks too short (more
    /// bytes follow that are not a chunk), reads on past it from the event's start.
    mutating func extendTrack(
        _ limit: inout Int, _ position: inout Int, _ readPastDeclaredEnd: inout Bool, _ eventStart: Int,
        _ bounds: TrackBounds
    ) throws(MIDIFileError) -> Bool {
        guard limit == bounds.declaredEnd, bounds.declaredEnd < bounds.fileEnd,
            !looksLikeChunkID(at: bounds.declaredEnd)
        else { return false }
        let declaredLength = bounds.declaredEnd - bounds.chunk - 8
        try report(
            .trackLengthTooShort, track: bounds.index, at: bounds.chunk + 4,
            "track events continue past its declared length of \(declaredLength) bytes")
        limit = bounds.fileEnd
        readPastDeclaredEnd = true
        position = eventStart
        return true
    }

    /// Where the track ends inside an event: reads on past a too-short length (true: go on with
    /// the event again) or reports the truncation (false: the track ends here).
    mutating func extendOrReportTruncation(
        _ limit: inout Int, _ position: inout Int, _ readPastDeclaredEnd: inout Bool, _ eventStart: Int,
        _ bounds: TrackBounds, at offset: Int, _ message: String
    ) throws(MIDIFileError) -> Bool {
        if try extendTrack(&limit, &position, &readPastDeclaredEnd, eventStart, bounds) { return true }
        try report(.truncatedEvent, track: bounds.index, at: offset, message)
        return false
    }

    /// Reads a variable-length quantity; nil when the track ends inside it.
    mutating func readVariableLength(_ position: inout Int, limit: Int, track: Int) throws(MIDIFileError) -> Int? {
        var value = 0
        let start = position
        while true {
            guard position < limit else { return nil }
            let byte = bytes[position]
            position += 1
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 { break }
            if position - start == 4 {
                try report(
                    .invalidVariableLengthQuantity, track: track, at: start,
                    "variable-length quantity longer than 4 bytes")
            }
            if position - start >= 8 { break }
        }
        // At most 8 bytes (56 bits) are read: an invalid longer quantity cannot overflow.
        return value
    }

    /// Reads a length-prefixed block (meta or SysEx data); nil when the track ends inside it.
    mutating func readBlock(_ position: inout Int, limit: Int, track: Int) throws(MIDIFileError) -> [UInt8]? {
        guard let length = try readVariableLength(&position, limit: limit, track: track) else { return nil }
        guard position + length <= limit else { return nil }
        let data = Array(bytes[position..<position + length])
        position += length
        return data
    }

    mutating func decodeMeta(
        type: UInt8, data: [UInt8], track: Int, offset: Int
    ) throws(MIDIFileError) -> MIDIFile.MetaEvent {
        func expect(_ length: Int, _ name: String) throws(MIDIFileError) {
            if data.count != length {
                try report(
                    .invalidMetaEventLength, track: track, at: offset,
                    "\(name) meta event of \(data.count) bytes, expected \(length)")
            }
        }
        func byte(_ index: Int, default value: UInt8) -> UInt8 { index < data.count ? data[index] : value }
        switch type {
        case 0x00:
            if data.isEmpty { return .sequenceNumber(nil) }
            try expect(2, "Sequence Number")
            return .sequenceNumber(UInt16(byte(0, default: 0)) << 8 | UInt16(byte(1, default: 0)))
        case 0x01...0x09:
            return .text(MIDIFile.TextKind(rawValue: type)!, data)
        case 0x20:
            try expect(1, "Channel Prefix")
            return .channelPrefix(byte(0, default: 0))
        case 0x21:
            try expect(1, "Port")
            return .port(byte(0, default: 0))
        case 0x51:
            try expect(3, "Set Tempo")
            let tempo =
                Int(byte(0, default: 0x07)) << 16 | Int(byte(1, default: 0xA1)) << 8 | Int(byte(2, default: 0x20))
            if tempo == 0 {
                try report(.invalidMetaEventValue, track: track, at: offset, "tempo of 0 µs per quarter note")
            }
            return .tempo(microsecondsPerQuarterNote: tempo)
        case 0x54:
            try expect(5, "SMPTE Offset")
            let fields = (0..<5).map { byte($0, default: 0) }
            if fields[0] & 0x1F > 23 || fields[1] > 59 || fields[2] > 59 || fields[3] > 29 || fields[4] > 99 {
                try report(.invalidMetaEventValue, track: track, at: offset, "SMPTE offset \(fields) out of range")
            }
            return .smpteOffset(
                hours: fields[0], minutes: fields[1], seconds: fields[2], frames: fields[3], subframes: fields[4])
        case 0x58:
            try expect(4, "Time Signature")
            let signature = MIDIFile.MetaEvent.timeSignature(
                numerator: byte(0, default: 4), denominatorPower: byte(1, default: 2),
                clocksPerClick: byte(2, default: 24),
                thirtySecondsPerQuarter: byte(3, default: 8))
            if byte(0, default: 4) == 0 || byte(1, default: 2) > 6 {
                try report(
                    .invalidMetaEventValue, track: track, at: offset,
                    "time signature \(byte(0, default: 4))/2^\(byte(1, default: 2))")
            }
            return signature
        case 0x59:
            try expect(2, "Key Signature")
            let sharps = Int8(bitPattern: byte(0, default: 0))
            let mode = byte(1, default: 0)
            if !(-7...7).contains(sharps) || mode > 1 {
                try report(
                    .invalidMetaEventValue, track: track, at: offset, "key signature \(sharps) sharps, mode \(mode)")
            }
            return .keySignature(sharps: sharps, minor: mode != 0)
        case 0x7F:
            return .sequencerSpecific(data)
        default:
            return .unknown(type: type, data: data)
        }
    }
}

/// A channel voice message from a status byte (0x80-0xEF) and 7-bit data bytes; kept here, inlined,
/// because it runs once per event on the parse's hot path.
@inline(__always)
func channelMessage(_ status: UInt8, _ a: UInt8, _ b: UInt8) -> MIDIMessage {
    let channel = status & 0x0F
    switch status >> 4 {
    case 0x8: return .noteOff(channel: channel, note: a, velocity: b)
    case 0x9: return .noteOn(channel: channel, note: a, velocity: b)
    case 0xA: return .polyphonicKeyPressure(channel: channel, note: a, pressure: b)
    case 0xB: return .controlChange(channel: channel, controller: a, value: b)
    case 0xC: return .programChange(channel: channel, program: a)
    case 0xD: return .channelPressure(channel: channel, pressure: a)
    default: return .pitchBend(channel: channel, value: UInt16(a) | UInt16(b) << 7)
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
