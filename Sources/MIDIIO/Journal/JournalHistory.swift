import MIDICore

/// The sender's side of the recovery journal (RFC 6295 §5, RFC 4696 §5): what each channel's
/// commands since the checkpoint left in effect, each item tagged with the packet that last
/// changed it, so that every packet can carry the journal of the stream before it, and the
/// history can be trimmed when the receiver says what it got (`acknowledge(through:)`, on RS).
///
/// It codes chapters P (program, with the bank in force), C (controllers, the value tool), W
/// (pitch wheel), N (notes on, with their velocity; notes released as OFFBITS), T (channel
/// pressure), A (poly pressure) and M (RPN and NRPN: the parameters Data Entry and Increment
/// changed, with the value tool, and the selection). Reset All Controllers is coded as the values
/// it sets (RP-015), All Notes Off and All Sound Off (and the mode changes 124-127) as their notes
/// released. SysEx commands go in the system journal's chapter X, each whole (up to
/// `maximumCodedSysEx` octets) with its number in the session (TCOUNT), so that a receiver sends
/// the ones it missed; a longer one, or one the journal has no room left for, is not repaired.
public struct JournalHistory: Sendable {
    /// One item of history: a value and the packet that last set it.
    struct Item<Value: Sendable>: Sendable {
        var value: Value
        var sequence: UInt16
    }

    /// A set of numbers 0…127, walked in ascending order: which controllers, notes and
    /// pressures have history, so that a journal looks at those only.
    struct Bits128: Sendable {
        var low: UInt64 = 0
        var high: UInt64 = 0

        var isEmpty: Bool { low == 0 && high == 0 }

        mutating func insert(_ number: Int) {
            if number < 64 { low |= 1 << UInt64(number) } else { high |= 1 << UInt64(number - 64) }
        }

        mutating func remove(_ number: Int) {
            if number < 64 { low &= ~(1 << UInt64(number)) } else { high &= ~(1 << UInt64(number - 64)) }
        }

        func forEach(_ body: (Int) -> Void) {
            for (word, base) in [(low, 0), (high, 64)] {
                var rest = word
                while rest != 0 {
                    body(base + rest.trailingZeroBitCount)
                    rest &= rest - 1
                }
            }
        }
    }

    struct Channel: Sendable {
        var program: Item<ChannelJournal.Program>?
        /// The bank selects last sent (not history: the bank a later Program Change takes).
        var bank: (msb: UInt8?, lsb: UInt8?) = (nil, nil)
        private(set) var controllers = [Item<UInt8>?](repeating: nil, count: 128)
        var pitchWheel: Item<(lsb: UInt8, msb: UInt8)>?
        /// A note's last command since the checkpoint: on (its velocity) or off (nil).
        private(set) var notes = [Item<UInt8?>?](repeating: nil, count: 128)
        var channelPressure: Item<UInt8>?
        /// Chapter M's history.
        var parameters = ParameterHistory()
        private(set) var polyPressure = [Item<ChannelJournal.PressureLog>?](repeating: nil, count: 128)
        private(set) var controllerBits = Bits128()
        private(set) var noteBits = Bits128()
        private(set) var pressureBits = Bits128()
        /// The notes sounding now (state, not history: acknowledgements keep it), so that an All
        /// Notes Off releases notes whose Note On was already trimmed.
        var sounding = Bits128()

        mutating func setController(_ number: Int, _ item: Item<UInt8>?) {
            controllers[number] = item
            if item == nil { controllerBits.remove(number) } else { controllerBits.insert(number) }
        }

        mutating func setNote(_ number: Int, _ item: Item<UInt8?>?) {
            notes[number] = item
            if item == nil { noteBits.remove(number) } else { noteBits.insert(number) }
        }

        mutating func setPressure(_ number: Int, _ item: Item<ChannelJournal.PressureLog>?) {
            polyPressure[number] = item
            if item == nil { pressureBits.remove(number) } else { pressureBits.insert(number) }
        }

        /// Drops what packets through `sequence` set.
        mutating func trim(through sequence: UInt16) {
            func acknowledged(_ item: UInt16) -> Bool { Int16(bitPattern: item &- sequence) <= 0 }
            if let item = program, acknowledged(item.sequence) { program = nil }
            if let item = pitchWheel, acknowledged(item.sequence) { pitchWheel = nil }
            if let item = channelPressure, acknowledged(item.sequence) { channelPressure = nil }
            parameters.trim(through: sequence)
            controllerBits.forEach { number in
                if let item = controllers[number], acknowledged(item.sequence) { setController(number, nil) }
            }
            noteBits.forEach { number in
                if let item = notes[number], acknowledged(item.sequence) { setNote(number, nil) }
            }
            pressureBits.forEach { number in
                if let item = polyPressure[number], acknowledged(item.sequence) { setPressure(number, nil) }
            }
        }

        /// Every item stamped with `sequence`.
        mutating func restamp(_ sequence: UInt16) {
            program?.sequence = sequence
            pitchWheel?.sequence = sequence
            channelPressure?.sequence = sequence
            parameters.restamp(sequence)
            controllerBits.forEach { controllers[$0]?.sequence = sequence }
            noteBits.forEach { notes[$0]?.sequence = sequence }
            pressureBits.forEach { polyPressure[$0]?.sequence = sequence }
        }

        /// Whether nothing is left to code.
        var isEmpty: Bool {
            program == nil && pitchWheel == nil && channelPressure == nil && controllerBits.isEmpty
                && noteBits.isEmpty && pressureBits.isEmpty && parameters.isEmpty
        }
    }

    /// The first packet the journal codes: the one after the last the receiver acknowledged.
    public private(set) var checkpoint: UInt16
    private var channels = [Channel](repeating: Channel(), count: 16)
    /// The channels with history (bit k: channel k), so that a packet's journal looks at those only.
    private var active: UInt16 = 0
    /// The SysEx commands sent in the session, modulo 256.
    private var sysExCount: UInt8 = 0
    /// The SysEx commands since the checkpoint that chapter X codes: their octets between F0 and
    /// F7 (nil for one too long to code), their number in the session, and the packet of each.
    private var sysEx: [(payload: [UInt8]?, number: UInt8, sequence: UInt16)] = []
    /// The longest SysEx command chapter X codes (octets between F0 and F7).
    public static let maximumCodedSysEx = 256

    /// A history that starts with the packet `firstSequence` (the stream's first).
    public init(firstSequence: UInt16) { checkpoint = firstSequence }

    /// Controllers coded elsewhere (RPN/NRPN data and numbers, chapter M) or by their effect
    /// (the channel mode messages 120-127).
    private static func isCodedInChapterC(_ controller: UInt8) -> Bool {
        !(controller == 6 || controller == 38 || (96...101).contains(controller) || controller >= 120)
    }

    /// Notes what `message`, sent in packet `sequence`, leaves in effect.
    public mutating func record(_ message: MIDIMessage, inPacket sequence: UInt16) {
        if case .systemExclusive(let payload) = message {
            sysExCount &+= 1
            // A longer command is logged by its number alone, so that the receiver's count follows.
            sysEx.append((payload.count <= Self.maximumCodedSysEx ? payload : nil, sysExCount, sequence))
            // No more than a system journal holds (1023 octets), and no more than 64, so that the
            // numbers (modulo 256) a receiver compares with its count stay unambiguous; the oldest go.
            var size = sysEx.reduce(0) { $0 + ($1.payload?.count ?? -1) + 3 }
            while size > 1000 || sysEx.count > 64 {
                size -= (sysEx[0].payload?.count ?? -1) + 3
                sysEx.removeFirst()
            }
            return
        }
        guard let channelNumber = message.channel else { return }
        let index = Int(channelNumber & 0x0F)
        active |= 1 << index
        switch message {
        case .noteOn(_, let note, let velocity) where velocity > 0:
            channels[index].setNote(Int(note & 0x7F), Item(value: velocity, sequence: sequence))
            channels[index].sounding.insert(Int(note & 0x7F))
        case .noteOn(_, let note, _), .noteOff(_, let note, _):
            channels[index].setNote(Int(note & 0x7F), Item(value: nil, sequence: sequence))
            channels[index].sounding.remove(Int(note & 0x7F))
        case .controlChange(_, let controller, let value):
            recordController(controller, value: value, channel: index, sequence: sequence)
        case .programChange(_, let program):
            let bank = channels[index].bank
            // B: a bank select MSB came before (RFC 6295 A.2), with the LSB sent since, else 0.
            let selected = bank.msb.map { ($0, bank.lsb ?? 0) }
            channels[index].program = Item(value: .init(program: program, bank: selected), sequence: sequence)
        case .pitchBend(_, let value):
            channels[index].pitchWheel = Item(
                value: (UInt8(value & 0x7F), UInt8(value >> 7 & 0x7F)), sequence: sequence)
        case .channelPressure(_, let pressure):
            channels[index].channelPressure = Item(value: pressure, sequence: sequence)
        case .polyphonicKeyPressure(_, let note, let pressure):
            channels[index].setPressure(
                Int(note & 0x7F), Item(value: .init(note: note & 0x7F, pressure: pressure), sequence: sequence))
        default:
            break
        }
    }

    private mutating func recordController(_ controller: UInt8, value: UInt8, channel: Int, sequence: UInt16) {
        if channels[channel].parameters.record(controller: controller, value: value, inPacket: sequence) { return }
        switch controller {
        case 0: channels[channel].bank.msb = value
        case 32: channels[channel].bank.lsb = value
        case 121:
            // Reset All Controllers (RP-015): modulation, the pedals and the wheels to rest.
            for (number, rest) in [(1, 0), (11, 127), (64, 0), (65, 0), (66, 0), (67, 0)] as [(Int, UInt8)] {
                channels[channel].setController(number, Item(value: rest, sequence: sequence))
            }
            channels[channel].pitchWheel = Item(value: (0, 64), sequence: sequence)
            channels[channel].channelPressure = Item(value: 0, sequence: sequence)
            return
        case 120, 123...127:
            // Every note released; poly pressure cancelled (chapter A's X bit).
            var notes = channels[channel]
            notes.sounding.forEach { note in notes.setNote(note, Item(value: nil, sequence: sequence)) }
            notes.sounding = Bits128()
            notes.pressureBits.forEach { note in
                if var pressure = notes.polyPressure[note], !pressure.value.isCancelled {
                    pressure.value.isCancelled = true
                    pressure.sequence = sequence
                    notes.setPressure(note, pressure)
                }
            }
            channels[channel] = notes
            return
        default: break
        }
        guard Self.isCodedInChapterC(controller) else { return }
        channels[channel].setController(Int(controller & 0x7F), Item(value: value, sequence: sequence))
    }

    /// The receiver got every packet through `sequence` (its RS feedback): the history before
    /// the next one is dropped, and the checkpoint moves there. An older acknowledgement is ignored.
    public mutating func acknowledge(through sequence: UInt16) {
        let next = sequence &+ 1
        guard Int16(bitPattern: next &- checkpoint) > 0 else { return }
        checkpoint = next
        sysEx.removeAll { Int16(bitPattern: $0.sequence &- sequence) <= 0 }
        for index in 0..<16 where active & 1 << index != 0 {
            channels[index].trim(through: sequence)
            if channels[index].isEmpty { active &= ~(1 << index) }
        }
    }

    /// Moves the checkpoint to `sequence` without a receiver's word, keeping every item (each is
    /// the stream's current state) but stamping them with it: for a peer that sends no feedback,
    /// before the history would span half the sequence numbers (and a checkpoint seem to be in
    /// the future). A receiver that lost packets before `sequence` then falls back to releasing.
    public mutating func rebase(to sequence: UInt16) {
        checkpoint = sequence
        for index in sysEx.indices { sysEx[index].sequence = sequence }
        for index in 0..<16 where active & 1 << index != 0 { channels[index].restamp(sequence) }
    }

    /// How many packets the history spans, up to the one numbered `sequence`.
    public func span(upTo sequence: UInt16) -> Int { Int(sequence &- checkpoint) }

    /// The journal packet `sequence` carries: the history before it. S bits are set on the
    /// structures the packet just before it (`sequence` − 1) did not change.
    public func journal(forPacket sequence: UInt16) -> RecoveryJournal {
        let previous = sequence &- 1
        var journal = RecoveryJournal(checkpoint: checkpoint)
        var anyRecent = false
        if !sysEx.isEmpty {
            var system = SystemJournal(
                sysEx: sysEx.map { command in
                    var log = SystemJournal.SysExLog(payload: command.payload ?? [], totalCount: command.number)
                    if command.payload == nil { log.data = nil }
                    log.isSinglePacketLossIrrelevant = command.sequence != previous
                    return log
                })
            system.isSinglePacketLossIrrelevant = system.sysEx.allSatisfy(\.isSinglePacketLossIrrelevant)
            anyRecent = !system.isSinglePacketLossIrrelevant
            journal.systemJournal = system
        }
        for (index, channel) in channels.enumerated() where active & 1 << index != 0 {
            var coded = ChannelJournal(channel: UInt8(index))
            var recent = false
            func irrelevant(_ item: UInt16) -> Bool {
                if item == previous { recent = true }
                return item != previous
            }
            if let item = channel.program {
                coded.program = item.value
                coded.program?.isSinglePacketLossIrrelevant = irrelevant(item.sequence)
            }
            channel.controllerBits.forEach { number in
                guard let item = channel.controllers[number] else { return }
                var log = ChannelJournal.ControllerLog(controller: UInt8(number), value: item.value)
                log.isSinglePacketLossIrrelevant = irrelevant(item.sequence)
                coded.controllers.append(log)
            }
            coded.parameters = channel.parameters.chapter(after: previous, recent: &recent)
            if let item = channel.pitchWheel {
                coded.pitchWheel = item.value
                _ = irrelevant(item.sequence)
            }
            var notes = ChannelJournal.Notes()
            var releasedBefore = false
            channel.noteBits.forEach { number in
                guard let item = channel.notes[number] else { return }
                if let velocity = item.value {
                    var log = ChannelJournal.NoteLog(note: UInt8(number), velocity: velocity)
                    log.isSinglePacketLossIrrelevant = irrelevant(item.sequence)
                    notes.logs.append(log)
                } else {
                    releasedBefore = releasedBefore || item.sequence == previous
                    _ = irrelevant(item.sequence)
                    notes.released.insert(UInt8(number))
                }
            }
            if !notes.logs.isEmpty || !notes.released.isEmpty {
                // B (RFC 6295 A.6): 0 only when the packet before had a Note Off on the channel.
                notes.isSinglePacketLossIrrelevant = !releasedBefore
                coded.notes = notes
            }
            if let item = channel.channelPressure {
                coded.channelPressure = item.value
                _ = irrelevant(item.sequence)
            }
            channel.pressureBits.forEach { number in
                guard let item = channel.polyPressure[number] else { return }
                var log = item.value
                log.isSinglePacketLossIrrelevant = irrelevant(item.sequence)
                coded.polyPressure.append(log)
            }
            guard !coded.isEmpty else { continue }
            coded.isSinglePacketLossIrrelevant = !recent
            anyRecent = anyRecent || recent
            journal.channels.append(coded)
        }
        journal.isSinglePacketLossIrrelevant = !anyRecent
        return journal
    }
}
