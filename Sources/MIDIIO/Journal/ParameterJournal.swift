import MIDICore

/// A channel's parameter system as its controllers leave it (RP-018): the selection, and each
/// RPN's or NRPN's last Data Entry MSB and LSB and the Data Increments less Decrements since.
/// Both sides of the journal keep one: the sender to code chapter M, the receiver to compare with it.
struct ParameterState: Equatable, Sendable {
    /// What a controller changed.
    enum Change: Equatable {
        /// Nothing here (not a parameter controller, or Data Entry with no parameter selected).
        case none
        /// The selection.
        case selection
        /// The value of this parameter.
        case value(ParameterNumber)
    }

    var selection = ParameterSelection()
    /// Each parameter's value, as a chapter M log codes it (S bits unused).
    var values: [ParameterNumber: ChannelJournal.ParameterLog] = [:]

    /// Applies controller `controller` set to `value`. Reset All Controllers (121) makes the
    /// selection null and marks every value as set before it (the X bits).
    mutating func apply(controller: UInt8, value: UInt8) -> Change {
        if controller == 121 {
            for key in values.keys { values[key]?.precedesReset = true }
        }
        if selection.apply(controller: controller, value: value) { return .selection }
        guard [6, 38, 96, 97].contains(controller), let active = selection.active else { return .none }
        selection.isPending = false
        var log = values[active] ?? ChannelJournal.ParameterLog(parameter: active)
        switch controller {
        case 6:
            log.entryMSB = value & 0x7F
            log.entryLSB = nil
            log.increments = nil
            log.precedesReset = false
        case 38:
            log.entryLSB = value & 0x7F
            log.increments = nil
            log.precedesReset = false
        case 96: log.increments = min((log.increments ?? 0) + 1, 0x3FFF)
        default: log.increments = max((log.increments ?? 0) - 1, -0x3FFF)
        }
        values[active] = log
        return .value(active)
    }

    /// The messages that set `parameter` to `log`'s value from `current` (nil: unknown), with the
    /// selection first when it is not selected already; nothing when they agree.
    func messages(setting log: ChannelJournal.ParameterLog, onChannel channel: UInt8) -> [MIDIMessage] {
        let current = values[log.parameter]
        // With an MSB the LSB counts too: an MSB alone cleared the LSB before it.
        let entryDiffers =
            (log.entryMSB != nil && (log.entryMSB != current?.entryMSB || log.entryLSB != current?.entryLSB))
            || (log.entryLSB != nil && log.entryLSB != current?.entryLSB)
        let steps = (log.increments ?? 0) - (entryDiffers ? 0 : current?.increments ?? 0)
        guard entryDiffers || steps != 0 else { return [] }
        var messages: [MIDIMessage] = []
        if selection.active != log.parameter || selection.isPending {
            messages += log.parameter.selection(onChannel: channel)
        }
        if entryDiffers {
            if let msb = log.entryMSB { messages.append(.controlChange(channel: channel, controller: 6, value: msb)) }
            if let lsb = log.entryLSB { messages.append(.controlChange(channel: channel, controller: 38, value: lsb)) }
        }
        // At most 127 steps: a count beyond is rare, and a flood of them worse than a wrong value.
        let step: UInt8 = steps > 0 ? 96 : 97
        for _ in 0..<min(abs(steps), 127) {
            messages.append(.controlChange(channel: channel, controller: step, value: 0))
        }
        return messages
    }

    /// `messages(setting:onChannel:)`, applied here as they would be where they are sent.
    mutating func set(to log: ChannelJournal.ParameterLog, onChannel channel: UInt8) -> [MIDIMessage] {
        let messages = messages(setting: log, onChannel: channel)
        for case .controlChange(_, let controller, let value) in messages {
            _ = apply(controller: controller, value: value)
        }
        return messages
    }

    /// The messages that make this selection `pending` (an MSB alone), `active`, or null.
    func messages(
        selecting active: ParameterNumber?, pending: (msb: UInt8, isNonRegistered: Bool)?, onChannel channel: UInt8
    )
        -> [MIDIMessage]
    {
        if let pending {
            let number = pending.isNonRegistered ? selection.nonRegistered : selection.registered
            if selection.isPending && selection.usesNonRegistered == pending.isNonRegistered
                && UInt8(number >> 7) == pending.msb
            {
                return []
            }
            let controller: UInt8 = pending.isNonRegistered ? 99 : 101
            return [.controlChange(channel: channel, controller: controller, value: pending.msb)]
        }
        guard selection.active != active || selection.isPending else { return [] }
        return (active ?? .null).selection(onChannel: channel)
    }
}

/// The sender's chapter M history of one channel: the parameter state, the parameters changed
/// since the checkpoint (the last changed last, each with the packet that changed it) and the
/// packet that last changed the selection.
struct ParameterHistory: Sendable {
    private(set) var state = ParameterState()
    private(set) var changed: [(parameter: ParameterNumber, sequence: UInt16)] = []
    private(set) var selectionSequence: UInt16?

    var isEmpty: Bool { changed.isEmpty && selectionSequence == nil }

    /// Notes controller `controller` set to `value` in packet `sequence`; false when it is not
    /// the parameter system's (Data Entry with nothing selected included: chapter C leaves it out).
    mutating func record(controller: UInt8, value: UInt8, inPacket sequence: UInt16) -> Bool {
        let wasPending = state.selection.isPending
        switch state.apply(controller: controller, value: value) {
        case .none: return false
        case .selection:
            selectionSequence = sequence
            if let active = state.selection.active, !state.selection.isPending { touch(active, sequence) }
            return controller != 121
        case .value(let parameter):
            if wasPending { selectionSequence = sequence }
            touch(parameter, sequence)
            return true
        }
    }

    private mutating func touch(_ parameter: ParameterNumber, _ sequence: UInt16) {
        changed.removeAll { $0.parameter == parameter }
        changed.append((parameter, sequence))
    }

    /// Drops what packets through `sequence` changed.
    mutating func trim(through sequence: UInt16) {
        func acknowledged(_ item: UInt16) -> Bool { Int16(bitPattern: item &- sequence) <= 0 }
        changed.removeAll { acknowledged($0.sequence) }
        if let item = selectionSequence, acknowledged(item) { selectionSequence = nil }
    }

    /// Every item stamped with `sequence`.
    mutating func restamp(_ sequence: UInt16) {
        for index in changed.indices { changed[index].sequence = sequence }
        if selectionSequence != nil { selectionSequence = sequence }
    }

    /// Chapter M for a packet after `previous`: nil when nothing changed since the checkpoint;
    /// `recent` becomes true when `previous` changed something.
    func chapter(after previous: UInt16, recent: inout Bool) -> ChannelJournal.Parameters? {
        guard !isEmpty else { return nil }
        var chapter = ChannelJournal.Parameters()
        var chapterRecent = selectionSequence == previous
        for (parameter, sequence) in changed {
            var log = state.values[parameter] ?? ChannelJournal.ParameterLog(parameter: parameter)
            log.isSinglePacketLossIrrelevant = sequence != previous
            chapterRecent = chapterRecent || sequence == previous
            chapter.logs.append(log)
        }
        let selection = state.selection
        if selection.isPending {
            let number = selection.usesNonRegistered ? selection.nonRegistered : selection.registered
            chapter.pending = (UInt8(number >> 7), selection.usesNonRegistered)
        } else if let active = selection.active {
            chapter.isFinalLogActive = changed.last?.parameter == active
        }
        chapter.isSinglePacketLossIrrelevant = !chapterRecent
        recent = recent || chapterRecent
        return chapter
    }
}
