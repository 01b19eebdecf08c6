import MIDICore

// The data packets of `RTPMIDISessionMachine`: sequence numbers, delta times, SysEx segments and
// what a session leaves sounding.
extension RTPMIDISessionMachine {
    /// The longest delta time honoured, in 100 µs ticks (20 ms).
    static let maximumDelta: UInt32 = 200

    /// A packet from `address`: played when it comes from its session's data port; dropped and
    /// counted when it names no open session or comes from anywhere else (another port, another
    /// host: not the peer).
    mutating func handle(_ packet: RTPMIDIPacket, from address: RTPMIDIAddress, at arrival: UInt64) {
        guard var peer = peers[packet.ssrc], peer.session.isConnected, peer.data == address else {
            malformedCount += 1
            return
        }
        peer.lastHeard = arrival
        var journal: RecoveryJournal?
        if packet.hasJournal {
            // A journal that cannot be read is counted: the gap it was to repair is not repaired.
            do { journal = try RecoveryJournal(parsing: packet.journal[...]) } catch {
                peer.session.malformedJournals += 1
            }
        }
        if let last = peer.lastSequence {
            let step = Int16(bitPattern: packet.sequence &- last)
            if step <= 0 {
                peers[packet.ssrc] = peer
                return  // a duplicate or a late packet: dropped, nothing repaired
            }
            if step > 1 {
                peer.session.lostPackets += Int(step) - 1
                peer.sysEx = nil  // a SysEx split across the gap lost a piece
                if let journal, journal.covers(lossAfter: last) {
                    repair(&peer, from: journal, at: arrival)
                    peer.session.repairedGaps += 1
                } else {
                    release(&peer, at: arrival)
                    // The SysEx it numbers are past, sent or not: not sent again at a later repair.
                    if let journal { peer.state.noteRepaired(from: journal) }
                }
            }
        } else if let journal {
            // The first packet ends a loss (RFC 6295 §4): what the stream left before it.
            repair(&peer, from: journal, at: arrival)
        }
        peer.lastSequence = packet.sequence
        for command in packet.commands {
            // Delta times are 100 µs ticks (at most 20 ms is honoured); times never go back, so
            // the queue stays in time order even when packets come faster than their deltas.
            let time = max(arrival + UInt64(min(command.delta, Self.maximumDelta)) * 100_000, lastStamp)
            lastStamp = time
            deliverCommand(command.bytes, to: &peer, at: time)
        }
        peers[packet.ssrc] = peer
        publish(peer, event: nil)
    }

    /// One command of a packet: a MIDI message, or SysEx whole or in segments.
    mutating func deliverCommand(_ bytes: [UInt8], to peer: inout Peer, at time: UInt64) {
        guard let first = bytes.first else { return }
        if first == 0xF0 || first == 0xF7 {
            let last = bytes.last ?? 0
            let body = bytes.count >= 2 ? bytes[1..<(bytes.count - 1)] : []
            switch (first, last) {
            case (0xF0, 0xF7): deliver(.systemExclusive(Array(body)), to: &peer, at: time)
            case (0xF0, 0xF0): peer.sysEx = Array(body)  // first segment
            case (0xF7, 0xF0):  // middle segment
                peer.sysEx?.append(contentsOf: body)
            case (0xF7, 0xF7):  // last segment
                if let start = peer.sysEx { deliver(.systemExclusive(start + body), to: &peer, at: time) }
                peer.sysEx = nil
            default:  // F4: cancelled
                peer.sysEx = nil
            }
            return
        }
        let message = MIDIMessage(
            status: first, data1: bytes.count > 1 ? bytes[1] : 0, data2: bytes.count > 2 ? bytes[2] : 0)
        if let message { deliver(message, to: &peer, at: time) }
    }

    /// A message out, and what it leaves sounding (notes, the sustain pedal) noted.
    mutating func deliver(_ message: MIDIMessage, to peer: inout Peer, at time: UInt64) {
        peer.state.apply(message)
        switch message {
        case .noteOn(let channel, let note, let velocity) where velocity > 0:
            peer.sounding.insert(UInt16(channel) << 8 | UInt16(note))
        case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
            peer.sounding.remove(UInt16(channel) << 8 | UInt16(note))
        case .controlChange(let channel, 64, let value):
            if value >= 64 { peer.sustained.insert(channel) } else { peer.sustained.remove(channel) }
        case .controlChange(let channel, 120, _), .controlChange(let channel, 123, _):
            peer.sounding = peer.sounding.filter { $0 >> 8 != UInt16(channel) }
        default:
            break
        }
        output.append(.midi(message, time: time, source: peer.tag))
        peer.session.messageCount += 1
        peer.session.lastArrival = time
    }

    /// Brings the session's state to what `journal` says the sender's stream left (before the
    /// packet's own commands).
    mutating func repair(_ peer: inout Peer, from journal: RecoveryJournal, at now: UInt64) {
        let time = max(now, lastStamp)
        lastStamp = time
        for message in peer.state.repairs(from: journal) { deliver(message, to: &peer, at: time) }
        peer.state.noteRepaired(from: journal)
    }

    /// Releases what a session left sounding: note-offs and the sustain pedal up, in key order.
    mutating func release(_ peer: inout Peer, at now: UInt64) {
        let time = max(now, lastStamp)
        lastStamp = time
        for key in peer.sounding.sorted() {
            deliver(.noteOff(channel: UInt8(key >> 8), note: UInt8(key & 0x7F), velocity: 0), to: &peer, at: time)
        }
        for channel in peer.sustained.sorted() {
            deliver(.controlChange(channel: channel, controller: 64, value: 0), to: &peer, at: time)
        }
        peer.sysEx = nil
    }
}
