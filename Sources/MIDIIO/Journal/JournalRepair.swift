import MIDICore

/// What a received MIDI stream has left in effect on each channel, as far as the receiver saw
/// it (notes sounding, controllers, program and bank, pitch wheel, pressures), and the commands
/// that bring it to what a recovery journal says the sender's stream left (RFC 4696 §7): the
/// receiver's side of loss repair.
///
/// `repairs(from:)` compares, chapter by chapter: a different program (and bank), controller,
/// pitch wheel or pressure is sent again; a note the journal says was released and that sounds
/// here gets a Note Off; a note the journal says is on, that does not sound here (or sounds with
/// another velocity, after a Note Off here), and that the sender recommends playing (Y) gets its
/// Note On. An RPN or NRPN whose value differs (chapter M) is selected and set again (Data Entry,
/// then the increments since), and the selection is left as the sender's: the parameter it has
/// selected, an MSB alone, or null. Controllers and parameters come before notes, so that a
/// sustain pedal that went down before a lost Note Off holds the note as it did at the sender.
/// What the journal does not mention did not change since its checkpoint, and is left alone.
public struct MIDIChannelStates: Equatable, Sendable {
    struct Channel: Equatable, Sendable {
        /// Velocity of each sounding note (nil: silent).
        var notes = [UInt8?](repeating: nil, count: 128)
        var controllers = [UInt8?](repeating: nil, count: 128)
        var program: UInt8?
        var pitchWheel: UInt16?
        var channelPressure: UInt8?
        var polyPressure = [UInt8?](repeating: nil, count: 128)
        var parameters = ParameterState()
    }

    private var channels = [Channel](repeating: Channel(), count: 16)
    /// The SysEx commands seen, modulo 256 (chapter X's TCOUNT counts them the same way).
    public private(set) var sysExCount: UInt8 = 0

    /// A state with nothing known: no note sounding, no controller, program, wheel or pressure seen.
    public init() {}

    /// Notes `message`'s effect.
    public mutating func apply(_ message: MIDIMessage) {
        if case .systemExclusive = message { sysExCount &+= 1 }
        guard let channel = message.channel.map({ Int($0 & 0x0F) }) else { return }
        switch message {
        case .noteOn(_, let note, let velocity) where velocity > 0: channels[channel].notes[Int(note & 0x7F)] = velocity
        case .noteOn(_, let note, _), .noteOff(_, let note, _): channels[channel].notes[Int(note & 0x7F)] = nil
        case .controlChange(_, let controller, let value):
            channels[channel].controllers[Int(controller & 0x7F)] = value
            _ = channels[channel].parameters.apply(controller: controller & 0x7F, value: value)
            switch controller {
            case 120, 123...127: channels[channel].notes = .init(repeating: nil, count: 128)
            case 121:
                for (number, rest) in [(1, 0), (11, 127), (64, 0), (65, 0), (66, 0), (67, 0)] as [(Int, UInt8)] {
                    channels[channel].controllers[number] = rest
                }
                channels[channel].pitchWheel = 0x2000
                channels[channel].channelPressure = 0
            default: break
            }
        case .programChange(_, let program): channels[channel].program = program
        case .pitchBend(_, let value): channels[channel].pitchWheel = value
        case .channelPressure(_, let pressure): channels[channel].channelPressure = pressure
        case .polyphonicKeyPressure(_, let note, let pressure):
            channels[channel].polyPressure[Int(note & 0x7F)] = pressure
        default: break
        }
    }

    /// The messages that bring a receiver that knows nothing to this state but its notes: on each
    /// channel, bank select and program, the other controllers (not the channel mode messages),
    /// the RPN and NRPN values set (each selected, then its Data Entry and increments; then the
    /// selection as it is), pitch wheel and pressures.
    public func chase() -> [MIDIMessage] {
        var messages: [MIDIMessage] = []
        for (index, channel) in channels.enumerated() {
            let number = UInt8(index)
            for bank in [0, 32] as [UInt8] {
                if let value = channel.controllers[Int(bank)] {
                    messages.append(.controlChange(channel: number, controller: bank, value: value))
                }
            }
            if let program = channel.program { messages.append(.programChange(channel: number, program: program)) }
            for controller in 1..<120 where ![6, 32, 38].contains(controller) && !(96...101).contains(controller) {
                if let value = channel.controllers[controller] {
                    messages.append(.controlChange(channel: number, controller: UInt8(controller), value: value))
                }
            }
            var parameters = ParameterState()  // a receiver that knows nothing
            let chased = self.parameters(onChannel: number).flatMap { parameters.set(to: $0, onChannel: number) }
            if !chased.isEmpty {
                let selection = channel.parameters.selection
                let selected = selection.usesNonRegistered ? selection.nonRegistered : selection.registered
                let pending = selection.isPending ? (UInt8(selected >> 7), selection.usesNonRegistered) : nil
                messages +=
                    chased + parameters.messages(selecting: selection.active, pending: pending, onChannel: number)
            }
            if let wheel = channel.pitchWheel { messages.append(.pitchBend(channel: number, value: wheel)) }
            if let pressure = channel.channelPressure {
                messages.append(.channelPressure(channel: number, pressure: pressure))
            }
        }
        return messages
    }

    /// The SysEx commands of `journal`'s chapter X numbered (TCOUNT) after the last one seen here
    /// that the journal holds whole, oldest first, and the number of its last log.
    private func missedSysEx(in journal: RecoveryJournal) -> (commands: [MIDIMessage], last: UInt8) {
        // Each number is compared with the count before the repair (within 127 of it: the sender
        // keeps at most 64 logs), and must come after the last one taken.
        var last = sysExCount
        var lastAhead: Int8 = 0
        var commands: [MIDIMessage] = []
        for log in journal.systemJournal?.sysEx ?? [] {
            guard let number = log.totalCount else { continue }
            let ahead = Int8(bitPattern: number &- sysExCount)
            guard ahead > lastAhead else { continue }
            if let payload = log.payload { commands.append(.systemExclusive(payload)) }
            last = number
            lastAhead = ahead
        }
        return (commands, last)
    }

    /// After the repairs from `journal` were delivered (and applied): the SysEx count moves to
    /// the sender's, past commands the journal did not hold (too long, or out of room).
    public mutating func noteRepaired(from journal: RecoveryJournal) {
        sysExCount = missedSysEx(in: journal).last
    }

    /// Whether `controller` belongs to the parameter system (Data Entry, Increment and
    /// Decrement, the NRPN and RPN numbers), which chapter M codes instead of chapter C.
    static func isParameterController(_ controller: UInt8) -> Bool {
        controller == 6 || controller == 38 || (96...101).contains(controller)
    }

    /// The last Data Entry (and increments after it) of `parameter` on `channel` (0…15), nil before any.
    public func parameter(_ parameter: ParameterNumber, onChannel channel: UInt8) -> ChannelJournal.ParameterLog? {
        channels[Int(channel & 0x0F)].parameters.values[parameter]
    }

    /// The RPN and NRPN values set on `channel` (0…15), RPNs first, each in number order.
    public func parameters(onChannel channel: UInt8) -> [ChannelJournal.ParameterLog] {
        channels[Int(channel & 0x0F)].parameters.values.values.sorted {
            ($0.parameter.isNonRegistered ? 1 << 14 : 0) + Int($0.parameter.number)
                < ($1.parameter.isNonRegistered ? 1 << 14 : 0) + Int($1.parameter.number)
        }
    }

    /// The parameter Data Entry changes on `channel` (0…15) now, nil when none is (or only an MSB came).
    public func selectedParameter(onChannel channel: UInt8) -> ParameterNumber? {
        let selection = channels[Int(channel & 0x0F)].parameters.selection
        return selection.isPending ? nil : selection.active
    }

    /// The notes sounding on `channel` (0…15), lowest first.
    public func soundingNotes(onChannel channel: UInt8) -> [UInt8] {
        channels[Int(channel & 0x0F)].notes.indices.filter { channels[Int(channel & 0x0F)].notes[$0] != nil }
            .map(UInt8.init)
    }

    /// A controller's last value on `channel`, nil before any.
    public func controller(_ number: UInt8, onChannel channel: UInt8) -> UInt8? {
        channels[Int(channel & 0x0F)].controllers[Int(number & 0x7F)]
    }

    /// The last program on `channel`, nil before any.
    public func program(onChannel channel: UInt8) -> UInt8? { channels[Int(channel & 0x0F)].program }
    /// The last pitch wheel on `channel` (14 bits, 0x2000 the centre), nil before any.
    public func pitchWheel(onChannel channel: UInt8) -> UInt16? { channels[Int(channel & 0x0F)].pitchWheel }
    /// The last channel pressure on `channel`, nil before any.
    public func channelPressure(onChannel channel: UInt8) -> UInt8? { channels[Int(channel & 0x0F)].channelPressure }

    /// The commands that bring this state to `journal`'s, in the order to send them (they are not
    /// applied here: send each through `apply` as it is delivered).
    public func repairs(from journal: RecoveryJournal) -> [MIDIMessage] {
        // The SysEx commands missed first: a reset among them must not undo the channels' repairs.
        var commands = missedSysEx(in: journal).commands
        for coded in journal.channels {
            let number = coded.channel & 0x0F
            let here = channels[Int(number)]
            // The bank the program was chosen in (chapter P's, else chapter C's) before the program,
            // which it takes effect with; then every controller's last value (the bank's too).
            var controllers = here.controllers
            var bankChanged = false
            let bank = coded.program?.bank
            for (controller, value) in [(0, bank?.msb), (32, bank?.lsb)] as [(UInt8, UInt8?)] {
                guard let value = value ?? coded.controllers.last(where: { $0.controller == controller })?.value,
                    controllers[Int(controller)] != value,
                    // An LSB of 0 in chapter P may only mean "none sent": one never set here is left.
                    !(controller == 32 && value == 0 && bank != nil && controllers[32] == nil)
                else { continue }
                commands.append(.controlChange(channel: number, controller: controller, value: value))
                controllers[Int(controller)] = value
                bankChanged = true
            }
            if let program = coded.program, here.program != program.program || bankChanged {
                commands.append(.programChange(channel: number, program: program.program))
            }
            // Not the parameter controllers (chapter M's), whose effect depends on the selection.
            for log in coded.controllers where log.controller < 120 && !Self.isParameterController(log.controller) {
                guard let value = log.value, controllers[Int(log.controller)] != value else { continue }
                commands.append(.controlChange(channel: number, controller: log.controller, value: value))
                controllers[Int(log.controller)] = value
            }
            if let chapter = coded.parameters {
                var parameters = here.parameters
                var repaired = chapter.logs.flatMap { parameters.set(to: $0, onChannel: number) }
                // Then the sender's selection: its final log's parameter, an MSB alone, or null.
                repaired += parameters.messages(selecting: chapter.active, pending: chapter.pending, onChannel: number)
                commands += repaired
            }
            if let wheel = coded.pitchWheel {
                let value = UInt16(wheel.msb) << 7 | UInt16(wheel.lsb)
                if here.pitchWheel != value { commands.append(.pitchBend(channel: number, value: value)) }
            }
            if let pressure = coded.channelPressure, here.channelPressure != pressure {
                commands.append(.channelPressure(channel: number, pressure: pressure))
            }
            if let notes = coded.notes {
                for note in notes.released.sorted() where here.notes[Int(note)] != nil {
                    commands.append(.noteOff(channel: number, note: note, velocity: 0))
                }
                for log in notes.logs where log.velocity > 0 && !notes.released.contains(log.note) {
                    let sounding = here.notes[Int(log.note)]
                    // Sounding with another velocity: a Note Off and a Note On were lost (RFC 4696 §7.2).
                    if let sounding, sounding != log.velocity {
                        commands.append(.noteOff(channel: number, note: log.note, velocity: 0))
                    } else if sounding != nil {
                        continue
                    }
                    if log.isRecommendedToPlay {
                        commands.append(.noteOn(channel: number, note: log.note, velocity: log.velocity))
                    }
                }
            }
            for log in coded.polyPressure where !log.isCancelled && here.polyPressure[Int(log.note)] != log.pressure {
                commands.append(.polyphonicKeyPressure(channel: number, note: log.note, pressure: log.pressure))
            }
        }
        return commands
    }
}
