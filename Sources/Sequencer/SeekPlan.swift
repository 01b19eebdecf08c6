import MIDICore

/// Where a seek lands: each track's next event, and the messages that recreate every channel's
/// state at that point (bank and program, controllers, registered parameters, pitch bend,
/// pressure, SysEx), so that playing from the middle sounds as it would have. Built on the
/// calling thread; the render thread only reads it (and hands it back to be freed off its thread).
final class SeekPlan: @unchecked Sendable {
    let seconds: Double
    let cursors: [Int]
    let chase: [(destination: Int, message: MIDIMessage)]

    /// The plan for `seconds` into `sequence`, whose tracks play into `trackDestination`'s
    /// destinations (`destinationCount` of them).
    init(seconds: Double, sequence: MusicSequence, trackDestination: [Int], destinationCount: Int) {
        self.seconds = seconds
        var cursors: [Int] = []
        var channels = [[ChannelState]](
            repeating: [ChannelState](repeating: ChannelState(), count: 16), count: destinationCount)
        var sysEx: [(Int, MIDIMessage)] = []
        for (trackIndex, track) in sequence.tracks.enumerated() {
            let next = SequencePlayhead.firstEvent(atOrAfter: seconds, in: track)
            cursors.append(next)
            let destination = trackDestination[trackIndex]
            for event in track.events[0..<next] {
                if case .systemExclusive = event.message {
                    sysEx.append((destination, event.message))
                } else {
                    channels[destination][Int(event.message.channel ?? 0)].apply(event.message)
                }
            }
        }
        var chase = sysEx
        for (destination, states) in channels.enumerated() {
            for (index, state) in states.enumerated() {
                chase += state.messages(channel: UInt8(index)).map { (destination, $0) }
            }
        }
        self.cursors = cursors
        self.chase = chase
    }

    /// What the chase recreates of one channel.
    private struct ChannelState {
        var bank: (msb: UInt8?, lsb: UInt8?) = (nil, nil)
        var program: UInt8?
        var controllers = [UInt8?](repeating: nil, count: 120)
        var rpn: [UInt16: (msb: UInt8?, lsb: UInt8?)] = [:]
        var selectedRPN: UInt16?
        var pitchBend: UInt16?
        var pressure: UInt8?

        mutating func apply(_ message: MIDIMessage) {
            switch message {
            case .programChange(_, let value):
                program = value
            case .controlChange(_, let controller, let value):
                switch controller {
                case 0: bank.msb = value
                case 32: bank.lsb = value
                case 101: selectedRPN = UInt16(value) << 7 | (selectedRPN ?? 0x7F) & 0x7F
                case 100: selectedRPN = (selectedRPN ?? 0x3F80) & 0x3F80 | UInt16(value)
                case 6:
                    if let selected = selectedRPN, selected != 0x3FFF { rpn[selected, default: (nil, nil)].msb = value }
                case 38:
                    if let selected = selectedRPN, selected != 0x3FFF { rpn[selected, default: (nil, nil)].lsb = value }
                case 98, 99: selectedRPN = 0x3FFF  // NRPNs are not chased
                case 96, 97: break
                case 120...127: break
                default: controllers[Int(controller)] = value
                }
            case .pitchBend(_, let value):
                pitchBend = value
            case .channelPressure(_, let value):
                pressure = value
            default:
                break
            }
        }

        /// The messages that recreate this state, in the order a synthesizer needs them.
        func messages(channel: UInt8) -> [MIDIMessage] {
            func control(_ controller: UInt8, _ value: UInt8) -> MIDIMessage {
                .controlChange(channel: channel, controller: controller, value: value)
            }
            var messages: [MIDIMessage] = []
            if let msb = bank.msb { messages.append(control(0, msb)) }
            if let lsb = bank.lsb { messages.append(control(32, lsb)) }
            if let program { messages.append(.programChange(channel: channel, program: program)) }
            for (controller, value) in controllers.enumerated() {
                if let value { messages.append(control(UInt8(controller), value)) }
            }
            for (number, data) in rpn.sorted(by: { $0.key < $1.key }) {
                messages += [control(101, UInt8(number >> 7)), control(100, UInt8(number & 0x7F))]
                if let msb = data.msb { messages.append(control(6, msb)) }
                if let lsb = data.lsb { messages.append(control(38, lsb)) }
            }
            if let selectedRPN {
                messages += [control(101, UInt8(selectedRPN >> 7)), control(100, UInt8(selectedRPN & 0x7F))]
            }
            if let pitchBend { messages.append(.pitchBend(channel: channel, value: pitchBend)) }
            if let pressure { messages.append(.channelPressure(channel: channel, pressure: pressure)) }
            return messages
        }
    }
}
