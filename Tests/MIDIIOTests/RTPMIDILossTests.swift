import MIDICore
import Testing

@testable import MIDIIO

/// Two session machines joined by a lossy link: one sends a song (with recovery journals), the
/// other receives it, the link drops chosen data packets; the receiver must end up in the
/// sender's state, where releasing everything on a gap would not.
@Suite("RTP-MIDI: sending with journals, receiving through losses")
struct RTPMIDILossTests {
    struct Link {
        var sender = RTPMIDISessionMachine(name: "sender", seed: 1)
        var receiver = RTPMIDISessionMachine(name: "receiver", seed: 2)
        let senderControl = RTPMIDIAddress(host: "10.0.0.1", port: 5004)
        let receiverControl = RTPMIDIAddress(host: "10.0.0.2", port: 5006)
        var now: UInt64 = 1_000_000_000
        /// Which of the song's packets (counted from 0; guards are never dropped) the link drops.
        var drops: (Int) -> Bool
        /// The song packet being sent, if any.
        var songPacket: Int?
        /// Whether the link drops the packets that are no song packet (guards).
        var dropsGuards = false
        /// Whether the link strips the journal off (as from a sender that sends none).
        var stripsJournal = false
        /// Whether the link cuts each journal short (two octets of its header left: it cannot be
        /// read), and how many it cut.
        var cutsJournal = false
        var cutJournals = 0
        var dataPackets = 0
        var heard = MIDIChannelStates()

        init(drops: @escaping (Int) -> Bool) {
            self.drops = drops
            sender.invite(receiverControl)
            pump()
        }

        /// Delivers every datagram either side asked to send, until both are quiet.
        mutating func pump() {
            while true {
                let fromSender = sender.takeOutput()
                let fromReceiver = receiver.takeOutput()
                if fromSender.isEmpty && fromReceiver.isEmpty { return }
                for case .send(var bytes, let address, let port) in fromSender {
                    let source = port == .data ? senderControl.nextPort : senderControl
                    if port == .data && !AppleMIDICommand.isCommand(bytes) {
                        dataPackets += 1
                        if songPacket.map(drops) ?? dropsGuards { continue }
                        if stripsJournal, let header = bytes.indices.contains(12) ? bytes[12] : nil {
                            let long = header & 0x80 != 0
                            let length = Int(header & 0x0F) << (long ? 8 : 0) | (long ? Int(bytes[13]) : 0)
                            bytes[12] &= ~0x40
                            bytes = Array(bytes.prefix(13 + (long ? 1 : 0) + length))
                        }
                        if cutsJournal, let header = bytes.indices.contains(12) ? bytes[12] : nil, header & 0x40 != 0 {
                            let long = header & 0x80 != 0
                            let length = Int(header & 0x0F) << (long ? 8 : 0) | (long ? Int(bytes[13]) : 0)
                            bytes = Array(bytes.prefix(13 + (long ? 1 : 0) + length + 2))
                            cutJournals += 1
                        }
                    }
                    receiver.receive(
                        bytes, from: source, on: address.port == receiverControl.port ? .control : .data, at: now)
                }
                for output in fromReceiver {
                    switch output {
                    case .send(let bytes, let address, let port):
                        let source = port == .data ? receiverControl.nextPort : receiverControl
                        sender.receive(
                            bytes, from: source, on: address.port == senderControl.port ? .control : .data, at: now)
                    case .midi(let message, _, _): heard.apply(message)
                    default: break
                    }
                }
            }
        }

        mutating func send(_ messages: [MIDIMessage], songPacket: Int? = nil) {
            now += 10_000_000
            self.songPacket = songPacket
            do { try sender.send(messages, at: now) } catch { Issue.record("\(error)") }
            pump()
            self.songPacket = nil
        }

        mutating func tick() {
            now += 1_000_000_000
            receiver.tick(now: now)
            sender.tick(now: now)
            pump()
        }
    }

    /// A song's worth of packets on three channels: programs, volume, the sustain pedal, wheels,
    /// chords held and released. Each inner list is one packet.
    static func song() -> [[MIDIMessage]] {
        var packets: [[MIDIMessage]] = [
            [.programChange(channel: 0, program: 0), .programChange(channel: 1, program: 32)],
            [
                .controlChange(channel: 0, controller: 7, value: 100),
                .controlChange(channel: 1, controller: 7, value: 90),
            ],
        ]
        for bar in 0..<16 {
            let root = UInt8(48 + bar % 5 * 2)
            packets.append([.controlChange(channel: 0, controller: 64, value: 127)])
            packets.append([0, 4, 7].map { .noteOn(channel: 0, note: root + $0, velocity: UInt8(70 + bar)) })
            packets.append([.noteOn(channel: 1, note: root - 12, velocity: 100)])
            packets.append([.pitchBend(channel: 1, value: UInt16(0x2000 + bar * 64))])
            packets.append([0, 4, 7].map { .noteOff(channel: 0, note: root + $0, velocity: 0) })
            packets.append([.noteOn(channel: 9, note: 36, velocity: 110), .noteOff(channel: 9, note: 36, velocity: 0)])
            if bar % 4 == 3 { packets.append([.programChange(channel: 1, program: UInt8(33 + bar / 4))]) }
            packets.append([.noteOff(channel: 1, note: root - 12, velocity: 0)])
            packets.append([.controlChange(channel: 0, controller: 64, value: 0)])
        }
        // The end: a held chord and a pedal down stay; a last packet releases one note.
        packets.append([
            .controlChange(channel: 0, controller: 64, value: 127), .noteOn(channel: 0, note: 72, velocity: 90),
        ])
        packets.append([.noteOff(channel: 0, note: 72, velocity: 0)])
        return packets
    }

    /// The sender's state after the song.
    static func sent() -> MIDIChannelStates {
        var state = MIDIChannelStates()
        for message in song().joined() { state.apply(message) }
        return state
    }

    static func describe(_ states: MIDIChannelStates) -> [String] {
        (0..<UInt8(16)).map { channel in
            let controllers = [0, 7, 64].map { states.controller($0, onChannel: channel).map(String.init) ?? "-" }
            return "\(channel): notes \(states.soundingNotes(onChannel: channel)) cc \(controllers) program "
                + "\(states.program(onChannel: channel).map(String.init) ?? "-") wheel "
                + "\(states.pitchWheel(onChannel: channel).map(String.init) ?? "-")"
        }
    }

    /// The song over a link that drops `drops`: the link (the receiver's state, the counters),
    /// and after how many of the packets that arrived the receiver's state was not the sender's.
    func play(dropping drops: @escaping (Int) -> Bool, stripJournal: Bool = false) -> (Link, wrong: Int) {
        var link = Link(drops: drops)
        link.stripsJournal = stripJournal
        var sent = MIDIChannelStates()
        var wrong = 0
        for (index, packet) in Self.song().enumerated() {
            link.send(packet, songPacket: index)
            for message in packet { sent.apply(message) }
            if !drops(index) && Self.describe(link.heard) != Self.describe(sent) { wrong += 1 }
            if index % 10 == 9 { link.tick() }  // receiver feedback (and guards)
        }
        // A pause: the guard packet carries the journal past a lost last packet.
        link.now += 100_000_000
        link.sender.sendGuards(now: link.now)
        link.pump()
        return (link, wrong)
    }

    @Test(
        "single losses, bursts of 5, the packets holding a note-off, a pedal change, a program change, the last one",
        arguments: [
            ("single", [5, 17, 40, 77]), ("burst of 5", Array(30..<35)), ("note-off", [6, 15]),
            ("pedal", [2, 10]), ("program", [0, 30]), ("last packet", [Self.song().count - 1]),
            ("every third", Array(stride(from: 1, to: 140, by: 3))),
        ] as [(String, [Int])])
    func repairsEachPattern(pattern: String, dropped: [Int]) {
        let drops = Set(dropped)
        let (link, wrong) = play(dropping: { drops.contains($0) })
        let session = link.receiver.sessions.first
        #expect(session?.lostPackets ?? 0 >= 1, "\(pattern): nothing was lost")
        #expect(session?.repairedGaps ?? 0 >= 1, "\(pattern): nothing was repaired")
        // After every packet that arrived, and at the end, the receiver is where the sender is.
        #expect(wrong == 0, "\(pattern): \(wrong) packets found the receiver wrong")
        #expect(Self.describe(link.heard) == Self.describe(Self.sent()), "\(pattern)")
        // Without the journal the same losses leave the receiver wrong (notes, pedal or program).
        let (bare, bareWrong) = play(dropping: { drops.contains($0) }, stripJournal: true)
        #expect(
            bareWrong > 0 || Self.describe(bare.heard) != Self.describe(Self.sent()),
            "\(pattern): releasing everything was right too")
    }

    @Test("journals that cannot be read are counted in the session's statistics; the gap is released, not repaired")
    func malformedJournalsCounted() {
        var link = Link(drops: { $0 == 5 })
        link.cutsJournal = true
        for (index, packet) in Self.song().prefix(12).enumerated() { link.send(packet, songPacket: index) }
        let session = link.receiver.sessions.first
        #expect(link.cutJournals > 0)
        #expect(session?.malformedJournals == link.cutJournals, "\(link.cutJournals) journals cut")
        #expect(session?.lostPackets == 1 && session?.repairedGaps == 0)
        // Their commands were played: the packets are not dropped.
        #expect(link.receiver.malformedCount == 0)
    }

    @Test("a message with a number out of MIDI's range is refused with its field, and nothing is sent")
    func outOfRangeRefused() throws {
        var link = Link(drops: { _ in false })
        let before = link.dataPackets
        #expect(throws: MIDIValueError(field: "channel", value: 20, range: 0...15)) {
            try link.sender.send(
                [.noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 20, note: 250, velocity: 200)],
                at: link.now)
        }
        link.pump()
        #expect(link.dataPackets == before)
    }

    @Test("receiver feedback trims the sender's journal: the checkpoint follows what was received")
    func feedbackTrims() throws {
        var link = Link(drops: { _ in false })
        link.send([.noteOn(channel: 0, note: 60, velocity: 100)])
        link.send([.controlChange(channel: 0, controller: 7, value: 90)])
        let sequence = try #require(link.sender.peers.values.first?.outgoing?.sequence)
        #expect(link.sender.peers.values.first?.outgoing?.history.checkpoint == sequence &- 2)
        // An RS for a packet never sent (a misread field) is ignored.
        let ssrc = link.receiver.ssrc
        link.sender.receive(
            AppleMIDICommand.receiverFeedback(ssrc: ssrc, sequence: UInt32(sequence &+ 500) << 16).bytes,
            from: link.receiverControl, on: .control, at: link.now)
        #expect(link.sender.peers.values.first?.outgoing?.history.checkpoint == sequence &- 2)
        link.tick()  // the receiver's RS: it has the last packet
        #expect(link.sender.peers.values.first?.outgoing?.history.checkpoint == sequence)
        #expect(link.sender.peers.values.first?.outgoing?.history.journal(forPacket: sequence).channels.isEmpty == true)
    }

    @Test("a lost last packet and its guard: the next tick's guard repairs it; a guard goes before BY")
    func repeatedGuards() {
        var link = Link(drops: { $0 == 0 })
        link.send([.noteOn(channel: 0, note: 60, velocity: 100)], songPacket: 0)
        link.dropsGuards = true  // the guard is lost too
        link.now += 100_000_000
        link.sender.sendGuards(now: link.now)
        link.pump()
        #expect(link.heard.soundingNotes(onChannel: 0).isEmpty)
        link.dropsGuards = false
        link.now += 1_000_000_000
        link.sender.tick(now: link.now)  // unacknowledged: the guard again
        link.pump()
        #expect(link.heard.soundingNotes(onChannel: 0) == [60])
        // A note released and lost just before the end: the guard before BY repairs it first.
        link.drops = { $0 == 1 }
        link.send([.noteOff(channel: 0, note: 60, velocity: 0)], songPacket: 1)
        link.sender.endAll(now: link.now)
        link.pump()
        #expect(link.heard.soundingNotes(onChannel: 0).isEmpty)
        #expect(link.receiver.sessions.isEmpty)
    }

    @Test("guard packets: one per pause, journal only, none while nothing changed")
    func guards() {
        var link = Link(drops: { $0 == 0 })  // the only note is lost
        link.send([.noteOn(channel: 0, note: 60, velocity: 100)], songPacket: 0)
        #expect(link.heard.soundingNotes(onChannel: 0).isEmpty)
        let before = link.dataPackets
        link.now += 10_000_000
        link.sender.sendGuards(now: link.now)  // too soon: nothing
        link.pump()
        #expect(link.dataPackets == before)
        link.now += 100_000_000
        link.sender.sendGuards(now: link.now)
        link.pump()
        #expect(link.dataPackets == before + 1)
        #expect(link.heard.soundingNotes(onChannel: 0) == [60], "the guard's journal started the lost note")
        link.now += 100_000_000
        link.sender.sendGuards(now: link.now)  // nothing new since the guard
        link.pump()
        #expect(link.dataPackets == before + 1)
    }

    @Test("a peer joining mid-song gets the song's banks, programs, controllers and wheels first, not its notes")
    func joiningMidSong() {
        var link = Link(drops: { _ in false })
        let song: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 0, value: 1), .programChange(channel: 0, program: 5),
            .controlChange(channel: 0, controller: 7, value: 90),
            .controlChange(channel: 0, controller: 64, value: 127),
            .pitchBend(channel: 1, value: 0x3000), .channelPressure(channel: 1, pressure: 40),
            .controlChange(channel: 1, controller: 101, value: 0), .noteOn(channel: 0, note: 60, velocity: 100),
        ]
        link.send(song)
        // A second peer opens a session with the sender now (it invites; the sender accepts).
        var late = RTPMIDISessionMachine(name: "late", seed: 3)
        let lateControl = RTPMIDIAddress(host: "10.0.0.3", port: 5008)
        late.invite(link.senderControl)
        var heard: [MIDIMessage] = []
        for _ in 0..<8 {
            for output in late.takeOutput() {
                switch output {
                case .send(let bytes, let address, let port):
                    link.sender.receive(
                        bytes, from: port == .data ? lateControl.nextPort : lateControl,
                        on: address.port == link.senderControl.port ? .control : .data, at: link.now)
                case .midi(let message, _, _): heard.append(message)
                default: break
                }
            }
            for case .send(let bytes, let address, let port) in link.sender.takeOutput()
            where address.host == lateControl.host {
                late.receive(
                    bytes, from: port == .data ? link.senderControl.nextPort : link.senderControl,
                    on: address.port == lateControl.port ? .control : .data, at: link.now)
            }
        }
        let wanted: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 0, value: 1), .programChange(channel: 0, program: 5),
            .controlChange(channel: 0, controller: 7, value: 90),
            .controlChange(channel: 0, controller: 64, value: 127),
            .pitchBend(channel: 1, value: 0x3000), .channelPressure(channel: 1, pressure: 40),
        ]
        #expect(heard == wanted, "\(heard)")
        #expect(link.heard.program(onChannel: 0) == 5, "the first peer got the song itself")
    }
}
