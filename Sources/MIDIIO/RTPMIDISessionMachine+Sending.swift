import MIDICore

// What this side sends its sessions: RTP-MIDI packets with a recovery journal (RFC 6295), the
// journal trimmed by each peer's receiver feedback, and journal-only guard packets after a pause
// (RFC 4696 §4), so that a lost last packet (a song's final Note Offs) is repaired too.
extension RTPMIDISessionMachine {
    /// A packet's command list holds at most this many bytes (the rest goes in more packets),
    /// leaving room for the journal within an Ethernet frame.
    static let maximumListLength = 512
    /// A guard packet goes out when nothing was sent for this long (nanoseconds) and the
    /// journal still holds something the peer has not acknowledged.
    public static let guardInterval: UInt64 = 50_000_000
    /// The most packets a journal's history spans before its checkpoint moves on unacknowledged.
    static let maximumHistorySpan = 16_384

    /// Sends `messages` to every open session, in one packet each (or several, for a long list),
    /// with the journal of what was sent before; `now` (a `MIDITimestamp`) is the RTP timestamp,
    /// in the session's 100 µs ticks. Throws ``MIDIValueError``, sending nothing, when a message
    /// holds a number MIDI 1.0 cannot carry (see ``MIDIMessage/validated()``).
    public mutating func send(_ messages: [MIDIMessage], at now: UInt64) throws(MIDIValueError) {
        for message in messages { _ = try message.validated() }
        guard !messages.isEmpty else { return }
        let packets = Self.commandLists(messages)
        for message in messages { sent.apply(message) }
        for key in peers.keys.sorted() { send(packets, toPeer: key, at: now) }
    }

    /// Sends `packets` (command lists) to one session, if it is open.
    private mutating func send(_ packets: [[MIDIMessage]], toPeer key: UInt32, at now: UInt64) {
        guard let peer = peers[key], peer.session.isConnected, let data = peer.data else { return }
        var outgoing = peer.outgoing ?? Outgoing(sequence: UInt16.random(in: 0...UInt16.max, using: &random))
        // A peer that sends no feedback: the checkpoint moves on by itself before the history
        // spans half the sequence numbers.
        if outgoing.history.span(upTo: outgoing.sequence) > Self.maximumHistorySpan {
            outgoing.history.rebase(to: outgoing.sequence)
        }
        for list in packets {
            output.append(.send(bytes: packet(list, from: &outgoing, at: now), to: data, from: .data))
        }
        outgoing.isGuarded = false
        peers[key]?.outgoing = outgoing
    }

    /// A session that opens while this side is sending (a peer joining mid-song) first gets the
    /// state the stream has left: banks and programs, controllers, RPN/NRPN values, pitch wheels
    /// and pressures (not
    /// the notes sounding: a note joined halfway would start late), in a packet of its own whose
    /// journal then covers them too.
    mutating func seed(_ key: UInt32, at now: UInt64) {
        let messages = sent.chase()
        guard !messages.isEmpty else { return }
        send(Self.commandLists(messages), toPeer: key, at: now)
    }

    /// `messages` in command lists of at most `maximumListLength` bytes, in order.
    static func commandLists(_ messages: [MIDIMessage]) -> [[MIDIMessage]] {
        var packets: [[MIDIMessage]] = [[]]
        var length = 0
        for message in messages {
            let size = ((try? message.bytes)?.count ?? 0) + 1  // checked by `send`
            if length + size > maximumListLength && !packets[packets.count - 1].isEmpty {
                packets.append([])
                length = 0
            }
            packets[packets.count - 1].append(message)
            length += size
        }
        return packets
    }

    /// Guard packets for the sessions idle since their last packet (called by a sender's own
    /// timer after each send, and by `tick`): an empty command list with the journal, once per
    /// pause; with `repeating` (each tick) again while the peer has not acknowledged the history
    /// (a guard can be lost too); with `force`, at once (before `BY`).
    public mutating func sendGuards(now: UInt64, repeating: Bool = false, force: Bool = false) {
        for (key, peer) in peers {
            guard var outgoing = peer.outgoing, peer.session.isConnected, let data = peer.data else { continue }
            let unacknowledged = outgoing.history.checkpoint != outgoing.sequence
            let due = force || now &- outgoing.lastSent >= Self.guardInterval
            guard due, !outgoing.isGuarded || ((repeating || force) && unacknowledged) else { continue }
            output.append(.send(bytes: packet([], from: &outgoing, at: now), to: data, from: .data))
            outgoing.isGuarded = true
            peers[key]?.outgoing = outgoing
        }
    }

    /// One packet: the RTP header (our SSRC, the next sequence number, the time in 100 µs ticks),
    /// the command list (delta times 0) and the journal of the stream before it.
    private func packet(_ messages: [MIDIMessage], from outgoing: inout Outgoing, at now: UInt64) -> [UInt8] {
        let sequence = outgoing.sequence
        let journal = outgoing.history.journal(forPacket: sequence).serialized()
        var list: [UInt8] = []
        for (index, message) in messages.enumerated() {
            if index > 0 { list.append(0) }
            list += (try? message.bytes) ?? []  // checked by `send`
        }
        let timestamp = UInt32(truncatingIfNeeded: now / 100_000)
        var bytes: [UInt8] = [0x80, 0x61, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence)]
        bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: timestamp >> $0) }
        bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) }
        // B set for a 12-bit length; J: a journal follows.
        if list.count < 16 {
            bytes.append(0x40 | UInt8(list.count))
        } else {
            bytes += [0xC0 | UInt8(list.count >> 8 & 0x0F), UInt8(truncatingIfNeeded: list.count)]
        }
        for message in messages { outgoing.history.record(message, inPacket: sequence) }
        outgoing.sequence &+= 1
        outgoing.lastSent = now
        return bytes + list + journal
    }
}
