import MIDICore
import Testing

@testable import MIDIIO

/// The far side of a session in the state machine's tests: its addresses, SSRC and token, and the
/// packets it sends, built by hand (no sockets).
struct RTPMIDITestPeer {
    var name = "keyboard"
    var control = RTPMIDIAddress(host: "10.0.0.2", port: 5004)
    var ssrc: UInt32 = 0x1111_2222
    var token: UInt32 = 0x0A0B_0C0D
    var sequence: UInt16 = 0xFFF0  // near the wrap-around, on purpose
    var data: RTPMIDIAddress { control.nextPort }

    /// An RTP-MIDI packet with this command list (the next sequence number, after `skip` lost ones).
    mutating func packet(_ list: [UInt8], journal: [UInt8] = [], skip: UInt16 = 0) -> [UInt8] {
        sequence &+= 1 &+ skip
        return Self.packet(list, sequence: sequence, ssrc: ssrc, journal: journal)
    }

    static func packet(_ list: [UInt8], sequence: UInt16, ssrc: UInt32, journal: [UInt8] = []) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 0x61, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence), 0, 0, 0, 0]
        bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) }
        let journalFlag: UInt8 = journal.isEmpty ? 0 : 0x40
        if list.count < 16 {
            bytes.append(journalFlag | UInt8(list.count))
        } else {
            bytes += [0x80 | journalFlag | UInt8(list.count >> 8), UInt8(truncatingIfNeeded: list.count)]
        }
        return bytes + list + journal
    }
}

/// A machine and a clock for it, with what came out of it.
struct RTPMIDIHarness {
    static let start: UInt64 = 1_000_000_000_000
    var machine: RTPMIDISessionMachine
    var now = Self.start

    init(
        name: String = "Pianola", allow: [RTPMIDIAddressRange] = [], timeout: Duration = .seconds(60), seed: UInt64 = 7
    ) {
        machine = RTPMIDISessionMachine(name: name, allow: allow, sessionTimeout: timeout, seed: seed)
    }

    /// One datagram in, at `now` (moved on by `after` nanoseconds first); its outputs.
    @discardableResult
    mutating func receive(
        _ bytes: [UInt8], from address: RTPMIDIAddress, on port: RTPMIDISessionMachine.Port, after: UInt64 = 1_000_000
    ) -> [RTPMIDISessionMachine.Output] {
        now += after
        machine.receive(bytes, from: address, on: port, at: now)
        return machine.takeOutput()
    }

    /// A session command from the peer.
    @discardableResult
    mutating func receive(
        _ command: AppleMIDICommand, from address: RTPMIDIAddress, on port: RTPMIDISessionMachine.Port,
        after: UInt64 = 1_000_000
    ) -> [RTPMIDISessionMachine.Output] {
        receive(command.bytes, from: address, on: port, after: after)
    }

    /// A tick, `after` nanoseconds on (a second by default); its outputs.
    @discardableResult
    mutating func tick(after: UInt64 = 1_000_000_000) -> [RTPMIDISessionMachine.Output] {
        now += after
        machine.tick(now: now)
        return machine.takeOutput()
    }

    /// `count` ticks a second apart: how many datagrams sent matched, and the events.
    mutating func ticks(
        _ count: Int,
        counting matches: ((command: AppleMIDICommand, to: RTPMIDIAddress, from: RTPMIDISessionMachine.Port)) -> Bool
    ) -> (sent: Int, events: [String]) {
        var sent = 0
        var events: [String] = []
        for _ in 0..<count {
            let out = tick()
            sent += out.commands.filter(matches).count
            events += out.events
        }
        return (sent, events)
    }

    /// We invite the peer at `control`; the token of the invitation, which must be the one
    /// datagram out.
    mutating func invite(_ control: RTPMIDIAddress) throws -> UInt32 {
        machine.invite(control)
        let sent = machine.takeOutput().commands
        let token = sent.first.flatMap { sent -> UInt32? in
            if case .invitation(let token, _, _) = sent.command { token } else { nil }
        }
        #expect(sent.count == 1 && sent.first?.to == control && sent.first?.from == .control)
        return try #require(token, "no invitation went out: \(sent)")
    }

    /// The peer invites us on both ports (its session opens); the outputs of both.
    @discardableResult
    mutating func connect(_ peer: RTPMIDITestPeer) -> [RTPMIDISessionMachine.Output] {
        let invitation = AppleMIDICommand.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name)
        return receive(invitation, from: peer.control, on: .control) + receive(invitation, from: peer.data, on: .data)
    }
}

extension [RTPMIDISessionMachine.Output] {
    /// The datagrams sent, parsed as session commands, with where they went.
    var commands: [(command: AppleMIDICommand, to: RTPMIDIAddress, from: RTPMIDISessionMachine.Port)] {
        compactMap {
            guard case .send(let bytes, let address, let port) = $0, let command = try? AppleMIDICommand(parsing: bytes)
            else { return nil }
            return (command, address, port)
        }
    }

    /// The MIDI messages' bytes.
    var midi: [[UInt8]] {
        compactMap {
            guard case .midi(let message, _, _) = $0 else { return nil }
            return message.wireBytes
        }
    }

    /// The MIDI messages' times.
    var times: [UInt64] {
        compactMap {
            guard case .midi(_, let time, _) = $0 else { return nil }
            return time
        }
    }

    var events: [String] {
        compactMap {
            guard case .event(let event) = $0 else { return nil }
            return event
        }
    }

    /// The last snapshot of each session, by SSRC.
    var sessions: [UInt32: RTPMIDIListener.Session] {
        var sessions: [UInt32: RTPMIDIListener.Session] = [:]
        for case .session(let session) in self { sessions[session.ssrc] = session }
        return sessions
    }
}

extension MIDIMessage {
    /// The message's bytes (the tests' messages are in MIDI's range; one that is not is a failure
    /// recorded here, with no bytes).
    var wireBytes: [UInt8] {
        do { return try bytes } catch {
            Issue.record("\(error)")
            return []
        }
    }
}
