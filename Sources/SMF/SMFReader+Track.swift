import MIDICore

extension SMFReader {
    /// Reads one `MTrk` chunk starting at `chunk`; returns the track and where the next chunk
    /// starts. Tolerates lengths that disagree with the events, truncation, missing End of Track,
    /// bad running status and illegal status bytes (see `MIDIFileDiagnostic.Kind`).
    ///
    /// One state machine, and so one loop: how each event's bytes read depends on what the events
    /// before it left in `TrackCursor` (running status and whether a meta or SysEx event cancelled
    /// it, a status byte found by resynchronizing, how far the chunk may be read). The delta time
    /// and the channel messages that make up nearly every file are read here, inline, on the
    /// parse's hot path; the rarer events (meta, SysEx, system bytes, a channel message that
    /// needs recovering) and the chunk's end have helpers of their own, inlined into the loop.
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
        var cursor = TrackCursor(
            bounds: TrackBounds(index: index, chunk: chunk, declaredEnd: declaredEnd, fileEnd: fileEnd),
            position: contentStart, limit: min(declaredEnd, fileEnd))
        // Every event takes at least two bytes, so a sink that stores events need never regrow.
        var events = Sink(maximumEventCount: max(16, (cursor.limit - contentStart) / 2 + 1))

        events: while true {
            if cursor.position >= cursor.limit {
                // The chunk ended without End of Track. If what follows is not a chunk, the events
                // most likely go on past a length field that is too short.
                if cursor.position < fileEnd && cursor.limit == declaredEnd && declaredLength > 0
                    && !looksLikeChunkID(at: cursor.position)
                {
                    try report(
                        .trackLengthTooShort, track: index, at: chunk + 4,
                        "track events continue past its declared length of \(declaredLength) bytes")
                    cursor.limit = fileEnd
                    cursor.readPastDeclaredEnd = true
                    continue
                }
                break
            }
            cursor.eventStart = cursor.position
            let readDelta: Int?
            if cursor.statusPending {
                readDelta = 0
                cursor.statusPending = false
            } else if bytes[cursor.position] < 0x80 {
                // Most delta times are one byte.
                readDelta = Int(bytes[cursor.position])
                cursor.position += 1
            } else {
                readDelta = try readVariableLength(&cursor.position, limit: cursor.limit, track: index)
            }
            guard let delta = readDelta else {
                let step = try extendOrReportTruncation(
                    &cursor, at: cursor.eventStart, "the track ends inside a delta time")
                if step == .next { continue }
                break
            }
            if delta > 1 << 23 {
                try report(.hugeDeltaTime, track: index, at: cursor.eventStart, "delta time of \(delta) ticks")
            }
            // Ticks saturate at 2^55, so even absurd files stay within range (and every delta
            // between two events fits the writer's 8-byte quantities).
            cursor.tick = min(cursor.tick + delta, 1 << 55)
            guard cursor.position < cursor.limit else {
                let step = try extendOrReportTruncation(
                    &cursor, at: cursor.position, "the track ends after a delta time")
                if step == .next { continue }
                break
            }
            let status = bytes[cursor.position]
            // The common cases first: a channel message in running status, or with its status
            // byte, with data in range.
            let runningStatus = cursor.runningStatus
            if status < 0x80 && runningStatus != 0 && !cursor.runningStatusCancelled {
                let count = runningStatus < 0xC0 || runningStatus >= 0xE0 ? 2 : 1
                if cursor.position + count <= cursor.limit {
                    let second = count == 2 ? bytes[cursor.position + 1] : 0
                    if second < 0x80 {
                        cursor.position += count
                        events.appendChannelMessage(tick: cursor.tick, status: runningStatus, status, second)
                        continue
                    }
                }
            } else if status >= 0x80 && status < 0xF0 {
                let count = status < 0xC0 || status >= 0xE0 ? 2 : 1
                if cursor.position + count < cursor.limit {
                    let first = bytes[cursor.position + 1]
                    let second = count == 2 ? bytes[cursor.position + 2] : 0
                    if first < 0x80 && second < 0x80 {
                        cursor.runningStatus = status
                        cursor.runningStatusCancelled = false
                        cursor.position += 1 + count
                        events.appendChannelMessage(tick: cursor.tick, status: status, first, second)
                        continue
                    }
                }
            }
            let step: TrackStep
            switch status {
            case 0xFF: step = try readMetaEvent(&cursor, into: &events)
            case 0xF0, 0xF7: step = try readSysEx(status, &cursor, into: &events)
            case 0xF1...0xFE: step = try skipSystemMessage(status, &cursor, track: index)
            default: step = try readChannelMessageRecovering(status, &cursor, into: &events)
            }
            if step == .stop { break }
        }
        let next = try finishTrack(&events, cursor)
        return (events, next)
    }

    /// Where one track's reading stands: what the event loop of `readTrack` carries from one
    /// event to the next.
    struct TrackCursor {
        /// The chunk being read.
        let bounds: TrackBounds
        /// The next byte to read.
        var position: Int
        /// Where the event being read starts (its delta time).
        var eventStart = 0
        /// Where reading stops: the chunk's declared end (the file's, if that comes first), or
        /// the file's end once the events were found to run on past a too-short length.
        var limit: Int
        /// Whether `limit` was moved past the declared end.
        var readPastDeclaredEnd = false
        /// The tick of the event being read.
        var tick = 0
        /// The status byte that a message without one continues (0: none yet).
        var runningStatus: UInt8 = 0
        /// Whether a meta or SysEx event came since `runningStatus` was set (running status used
        /// after one is reported).
        var runningStatusCancelled = false
        /// Set after resynchronizing onto a status byte: the next event has no delta time.
        var statusPending = false
        /// Where End of Track ended, once read.
        var endOfTrackAt: Int?
    }

    /// What the event loop does after an event: read the next one (a `limit` extended past a
    /// too-short length reads the event again), or stop (End of Track, or the track ends inside
    /// the event).
    enum TrackStep {
        case next
        case stop
    }

    /// Where a track's chunk lies: the track's index, where the chunk starts, where its length
    /// says it ends, and where the file ends.
    struct TrackBounds {
        var index: Int
        var chunk: Int
        var declaredEnd: Int
        var fileEnd: Int
    }

    /// Reads a meta event (status 0xFF at `cursor.position`): End of Track stops the loop and
    /// marks where the track ended; any other is decoded and cancels running status.
    @inline(__always)
    private mutating func readMetaEvent<Sink: TrackSink>(
        _ cursor: inout TrackCursor, into events: inout Sink
    ) throws(MIDIFileError) -> TrackStep {
        guard cursor.position + 1 < cursor.limit else {
            return try extendOrReportTruncation(
                &cursor, at: cursor.position, "the track ends inside a meta event")
        }
        let type = bytes[cursor.position + 1]
        cursor.position += 2
        guard let data = try readBlock(&cursor.position, limit: cursor.limit, track: cursor.bounds.index) else {
            return try extendOrReportTruncation(
                &cursor, at: cursor.eventStart, "the track ends inside a meta event")
        }
        if type == 0x2F {
            if !data.isEmpty {
                try report(
                    .invalidMetaEventLength, track: cursor.bounds.index, at: cursor.eventStart,
                    "End of Track with \(data.count) data bytes")
            }
            events.append(MIDIFile.Event(tick: cursor.tick, .meta(.endOfTrack)))
            cursor.endOfTrackAt = cursor.position
            return .stop
        }
        let meta = try decodeMeta(type: type, data: data, track: cursor.bounds.index, offset: cursor.eventStart)
        events.append(MIDIFile.Event(tick: cursor.tick, .meta(meta)))
        cursor.runningStatusCancelled = cursor.runningStatus != 0
        return .next
    }

    /// Reads a SysEx event (0xF0) or an escape (0xF7) with its length-prefixed data; either
    /// cancels running status.
    @inline(__always)
    private mutating func readSysEx<Sink: TrackSink>(
        _ status: UInt8, _ cursor: inout TrackCursor, into events: inout Sink
    ) throws(MIDIFileError) -> TrackStep {
        cursor.position += 1
        guard let data = try readBlock(&cursor.position, limit: cursor.limit, track: cursor.bounds.index) else {
            return try extendOrReportTruncation(
                &cursor, at: cursor.eventStart, "the track ends inside a SysEx event")
        }
        events.append(MIDIFile.Event(tick: cursor.tick, status == 0xF0 ? .sysEx(data) : .escape(data)))
        cursor.runningStatusCancelled = cursor.runningStatus != 0
        return .next
    }

    /// Skips a system status byte (0xF1-0xFE) that has no place in a file, with the data bytes
    /// it takes, and reports it.
    @inline(__always)
    private mutating func skipSystemMessage(
        _ status: UInt8, _ cursor: inout TrackCursor, track: Int
    ) throws(MIDIFileError) -> TrackStep {
        let length = MIDIMessage.dataLength(ofStatus: status) ?? 0
        if MIDIMessage.dataLength(ofStatus: status) == nil {
            try report(
                .undefinedStatus, track: track, at: cursor.position, "undefined status byte \(hex(status)) skipped")
        } else {
            try report(
                .illegalSystemMessage, track: track, at: cursor.position,
                "system message \(hex(status)) is not allowed in a MIDI file; skipped")
        }
        cursor.position += 1
        var skipped = 0
        while skipped < length && cursor.position < cursor.limit && bytes[cursor.position] < 0x80 {
            cursor.position += 1
            skipped += 1
        }
        return .next
    }

    /// Reads a channel message that the loop's fast paths did not take: running status after a
    /// meta or SysEx event, data bytes with no running status (skipped, resynchronizing on the
    /// next status byte), data bytes above 127 (clamped), or a message cut off by the chunk's end.
    @inline(__always)
    private mutating func readChannelMessageRecovering<Sink: TrackSink>(
        _ status: UInt8, _ cursor: inout TrackCursor, into events: inout Sink
    ) throws(MIDIFileError) -> TrackStep {
        let track = cursor.bounds.index
        var messageStatus = status
        if status >= 0x80 {
            cursor.runningStatus = status
            cursor.runningStatusCancelled = false
            cursor.position += 1
        } else if cursor.runningStatus != 0 {
            messageStatus = cursor.runningStatus
            if cursor.runningStatusCancelled {
                try report(
                    .runningStatusAfterMetaOrSysEx, track: track, at: cursor.position,
                    "running status \(hex(cursor.runningStatus)) used after a meta or SysEx event")
                cursor.runningStatusCancelled = false
            }
        } else {
            // Resynchronize on the next status byte, read as an event at this tick.
            var skipped = cursor.position
            while skipped < cursor.limit && bytes[skipped] < 0x80 { skipped += 1 }
            try report(
                .dataWithoutRunningStatus, track: track, at: cursor.position,
                "\(skipped - cursor.position) data bytes with no running status; skipped")
            guard skipped < cursor.limit else {
                cursor.position = skipped
                return .next
            }
            messageStatus = bytes[skipped]
            cursor.position = skipped
            if messageStatus >= 0xF0 {
                // A meta, SysEx or system byte: read it as the next event, at this tick.
                cursor.statusPending = true
                return .next
            }
            cursor.runningStatus = messageStatus
            cursor.runningStatusCancelled = false
            cursor.position += 1
        }
        let count = messageStatus >= 0xC0 && messageStatus < 0xE0 ? 1 : 2
        guard cursor.position + count <= cursor.limit else {
            return try extendOrReportTruncation(
                &cursor, at: cursor.eventStart, "the track ends inside a channel message")
        }
        var first = bytes[cursor.position]
        var second = count == 2 ? bytes[cursor.position + 1] : 0
        if first >= 0x80 || second >= 0x80 {
            try report(
                .invalidDataByte, track: track, at: cursor.position,
                "data byte above 127 in a \(hex(messageStatus)) message; clamped")
            first = min(first, 0x7F)
            second = min(second, 0x7F)
        }
        cursor.position += count
        events.appendChannelMessage(tick: cursor.tick, status: messageStatus, first, second)
        return .next
    }

    /// After the event loop: adds the End of Track a track lacks (reported), reports a declared
    /// length that disagrees with where End of Track came, and returns where the next chunk starts.
    @inline(__always)
    private mutating func finishTrack<Sink: TrackSink>(
        _ events: inout Sink, _ cursor: TrackCursor
    ) throws(MIDIFileError) -> Int {
        let bounds = cursor.bounds
        let (index, chunk, declaredEnd, fileEnd) = (bounds.index, bounds.chunk, bounds.declaredEnd, bounds.fileEnd)
        let contentStart = chunk + 8
        let declaredLength = declaredEnd - contentStart
        guard let endOfTrack = cursor.endOfTrackAt else {
            // Even an empty chunk is reported: every SMF track must end with End of Track.
            try report(
                .missingEndOfTrack, track: index, at: cursor.position,
                "no End of Track; one was added at tick \(cursor.tick)")
            events.append(MIDIFile.Event(tick: events.lastTick, .meta(.endOfTrack)))
            return cursor.readPastDeclaredEnd ? cursor.position : max(cursor.position, min(declaredEnd, fileEnd))
        }
        if cursor.readPastDeclaredEnd || declaredEnd > fileEnd { return endOfTrack }
        if endOfTrack < declaredEnd {
            if matches("MTrk", at: endOfTrack) {
                try report(
                    .trackLengthTooLong, track: index, at: chunk + 4,
                    "track declares \(declaredLength) bytes but ends after \(endOfTrack - contentStart)")
                return endOfTrack
            }
            try report(
                .dataAfterEndOfTrack, track: index, at: endOfTrack,
                "\(declaredEnd - endOfTrack) bytes after End of Track, ignored")
        }
        return declaredEnd
    }

    /// Called where the chunk ends inside an event: if the declared length looks too short (more
    /// bytes follow that are not a chunk), reads on past it from the event's start.
    mutating func extendTrack(_ cursor: inout TrackCursor) throws(MIDIFileError) -> Bool {
        let bounds = cursor.bounds
        guard cursor.limit == bounds.declaredEnd, bounds.declaredEnd < bounds.fileEnd,
            !looksLikeChunkID(at: bounds.declaredEnd)
        else { return false }
        let declaredLength = bounds.declaredEnd - bounds.chunk - 8
        try report(
            .trackLengthTooShort, track: bounds.index, at: bounds.chunk + 4,
            "track events continue past its declared length of \(declaredLength) bytes")
        cursor.limit = bounds.fileEnd
        cursor.readPastDeclaredEnd = true
        cursor.position = cursor.eventStart
        return true
    }

    /// Where the track ends inside an event: reads on past a too-short length (`.next`: read the
    /// event again) or reports the truncation (`.stop`: the track ends here).
    mutating func extendOrReportTruncation(
        _ cursor: inout TrackCursor, at offset: Int, _ message: String
    ) throws(MIDIFileError) -> TrackStep {
        if try extendTrack(&cursor) { return .next }
        try report(.truncatedEvent, track: cursor.bounds.index, at: offset, message)
        return .stop
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
