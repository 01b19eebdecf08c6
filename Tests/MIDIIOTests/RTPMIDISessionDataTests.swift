import MIDICore
import Testing

@testable import MIDIIO

/// MIDI through `RTPMIDISessionMachine`, driven directly: running status, delta times, SysEx
/// segments, losses, duplicates, macOS's captured packets, malformed and fuzzed input. (These were
/// network checks against a running `pianola live`; they need no socket.)
@Suite("RTP-MIDI session state machine: MIDI")
struct RTPMIDISessionDataTests {
    /// A harness with one open session from `peer`.
    func connected(_ peer: RTPMIDITestPeer = RTPMIDITestPeer()) -> RTPMIDIHarness {
        var harness = RTPMIDIHarness()
        harness.connect(peer)
        return harness
    }

    @Test("running status and delta times: each message at its arrival plus its delta, at most 20 ms on")
    func runningStatusAndDeltas() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        // NoteOn 62, delta 1 ms, running status NoteOn 64.
        let first = harness.receive(peer.packet([0x90, 62, 49, 0x0A, 64, 59]), from: peer.data, on: .data)
        #expect(first.midi == [[0x90, 62, 49], [0x90, 64, 59]])
        #expect(first.times == [harness.now, harness.now + 1_000_000])
        // A two-octet delta (128 ticks: 12.8 ms) and running status; then one of 384 ticks, capped.
        let second = harness.receive(
            peer.packet([0x80, 60, 0, 0x00, 0x90, 62, 0, 0x81, 0x00, 64, 0, 0x82, 0x00, 65, 0]), from: peer.data,
            on: .data, after: 100_000_000)
        #expect(second.midi == [[0x80, 60, 0], [0x90, 62, 0], [0x90, 64, 0], [0x90, 65, 0]])
        let arrival = harness.now
        #expect(second.times == [arrival, arrival, arrival + 12_800_000, arrival + 20_000_000])
        // A packet 1 ms later: its message is not stamped before the last one.
        let third = harness.receive(peer.packet([0xB0, 7, 100]), from: peer.data, on: .data)
        #expect(third.times == [arrival + 20_000_000])
        #expect(third.sessions[peer.ssrc]?.messageCount == 7)
        #expect(third.sessions[peer.ssrc]?.lastArrival == arrival + 20_000_000)
    }

    @Test("program change, pitch bend, channel pressure and a controller on channel 2, in order")
    func channelMessages() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        let out = harness.receive(
            peer.packet([0xC1, 0x30, 0x00, 0xE1, 0x00, 0x50, 0x00, 0xD1, 0x40, 0x00, 0xB1, 0x07, 0x64]),
            from: peer.data, on: .data)
        #expect(out.midi == [[0xC1, 0x30], [0xE1, 0x00, 0x50], [0xD1, 0x40], [0xB1, 0x07, 0x64]])
        let source = out.compactMap { output -> UInt16? in
            if case .midi(_, _, let source) = output { source } else { nil }
        }
        #expect(Set(source).count == 1 && source.first ?? 0 > 0x4000)
    }

    @Test("SysEx whole, and in segments across packets (F0…F0, F7…F0, F7…F7); F4 cancels")
    func sysExSegments() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        #expect(harness.receive(peer.packet([0xF0, 0x7E, 0x7F, 0xF0]), from: peer.data, on: .data).midi.isEmpty)
        #expect(harness.receive(peer.packet([0xF7, 0x09, 0xF0]), from: peer.data, on: .data).midi.isEmpty)
        let last = harness.receive(peer.packet([0xF7, 0x01, 0xF7]), from: peer.data, on: .data)
        #expect(last.midi == [[0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]])
        let whole = harness.receive(
            peer.packet([0xF0, 0x7F, 0x7F, 0x04, 0x01, 0x00, 0x7F, 0xF7]), from: peer.data, on: .data)
        #expect(whole.midi == [[0xF0, 0x7F, 0x7F, 0x04, 0x01, 0x00, 0x7F, 0xF7]])
        // Cancelled: the last segment after F4 has nothing to end.
        harness.receive(peer.packet([0xF0, 0x01, 0xF0]), from: peer.data, on: .data)
        harness.receive(peer.packet([0xF7, 0xF4]), from: peer.data, on: .data)
        #expect(harness.receive(peer.packet([0xF7, 0x02, 0xF7]), from: peer.data, on: .data).midi.isEmpty)
        // A segment lost in the middle: the SysEx is dropped, not spliced.
        harness.receive(peer.packet([0xF0, 0x03, 0xF0]), from: peer.data, on: .data)
        #expect(harness.receive(peer.packet([0xF7, 0x04, 0xF7], skip: 1), from: peer.data, on: .data).midi.isEmpty)
        #expect(harness.machine.malformedCount == 0)
    }

    @Test("a lost packet releases the sounding notes and the sustain pedal; the journal is not read as MIDI")
    func lostPacket() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        harness.receive(
            peer.packet([0x90, 70, 90, 0x00, 0x91, 40, 90, 0x00, 0xB0, 64, 127]), from: peer.data, on: .data)
        let out = harness.receive(
            peer.packet([0xB0, 0x01, 0x10], journal: [0x80, 0x00, 0x10], skip: 1), from: peer.data, on: .data)
        #expect(out.midi == [[0x80, 70, 0], [0x81, 40, 0], [0xB0, 64, 0], [0xB0, 0x01, 0x10]])
        #expect(out.sessions[peer.ssrc]?.lostPackets == 1)
        // Released once: a later gap has nothing to release.
        let later = harness.receive(peer.packet([0xB0, 0x01, 0x11], skip: 3), from: peer.data, on: .data)
        #expect(later.midi == [[0xB0, 0x01, 0x11]])
        #expect(later.sessions[peer.ssrc]?.lostPackets == 4)
    }

    @Test("a gap is repaired from the next packet's journal: what was lost is played, nothing else released")
    func lostPacketRepaired() throws {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        var history = JournalHistory(firstSequence: peer.sequence &+ 1)
        // The sender's packets: each carries the journal of the stream before it.
        func send(_ messages: [MIDIMessage], lost: Bool = false) -> [[UInt8]] {
            let sequence = peer.sequence &+ 1
            // Delta time 0 before every command but the first.
            let list: [UInt8] = messages.enumerated().flatMap { index, message -> [UInt8] in
                index == 0 ? message.wireBytes : [0] + message.wireBytes
            }
            let bytes = peer.packet(list, journal: history.journal(forPacket: sequence).serialized())
            for message in messages { history.record(message, inPacket: sequence) }
            return lost ? [] : harness.receive(bytes, from: peer.data, on: .data).midi
        }
        _ = send([.noteOn(channel: 0, note: 60, velocity: 90), .noteOn(channel: 1, note: 40, velocity: 80)])
        // Lost: the pedal down, 60 released (held by the pedal), 64 started, a program, a wheel.
        _ = send(
            [
                .controlChange(channel: 0, controller: 64, value: 127), .noteOff(channel: 0, note: 60, velocity: 0),
                .noteOn(channel: 0, note: 64, velocity: 70), .programChange(channel: 1, program: 33),
                .pitchBend(channel: 1, value: 0x3000),
            ], lost: true)
        let out = send([.noteOn(channel: 0, note: 67, velocity: 60)])
        // The pedal before the note-off (60 keeps sounding under it), 64 started, channel 2's
        // program and wheel; then the packet's own note. Channel 2's note 40 is left alone.
        #expect(
            out == [
                [0xB0, 64, 127], [0x80, 60, 0], [0x90, 64, 70], [0xC1, 33], [0xE1, 0x00, 0x60], [0x90, 67, 60],
            ])
        let session = try #require(harness.machine.sessions.first)
        #expect(session.lostPackets == 1 && session.repairedGaps == 1)
    }

    @Test("a SysEx whose middle segment was lost is not delivered, even when a journal covers the gap")
    func sysExAcrossARepairedGap() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        // A journal with no channel journal, its checkpoint the first packet: it covers the gap.
        let checkpoint = peer.sequence &+ 1
        let journal: [UInt8] = [0x00, UInt8(checkpoint >> 8), UInt8(truncatingIfNeeded: checkpoint)]
        #expect(
            harness.receive(peer.packet([0xF0, 0x7E, 0x7F, 0xF0], journal: journal), from: peer.data, on: .data).midi
                .isEmpty)
        let last = harness.receive(
            peer.packet([0xF7, 0x01, 0xF7], journal: journal, skip: 1), from: peer.data, on: .data)
        #expect(last.midi.isEmpty, "\(last.midi)")
        #expect(harness.machine.sessions.first?.repairedGaps == 1)
    }

    @Test("100 000 packets with mangled journals and random gaps: no trap, and nothing sounds after BY")
    func fuzzedJournals() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        var generator = SplitMix64(seed: 4695)
        func random(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        // A sender's stream of notes and pedals over four channels, each packet with its journal
        // (a pool of 2 000, mangled anew each time they are sent).
        var history = JournalHistory(firstSequence: 0)
        var stream: [(message: MIDIMessage, journal: [UInt8])] = []
        for sequence in 0..<UInt16(2_000) {
            let channel = UInt8(random(4))
            let note = UInt8(36 + random(48))
            let message: MIDIMessage =
                random(3) == 0
                ? .noteOff(channel: channel, note: note, velocity: 0)
                : random(8) == 0
                    ? .controlChange(channel: channel, controller: 64, value: random(2) == 0 ? 0 : 127)
                    : .noteOn(channel: channel, note: note, velocity: UInt8(1 + random(127)))
            stream.append((message, history.journal(forPacket: sequence).serialized()))
            history.record(message, inPacket: sequence)
            if random(200) == 0 { history.acknowledge(through: sequence) }
        }
        var heard = MIDIChannelStates()
        for index in 0..<100_000 {
            var (message, journal) = stream[index % stream.count]
            switch random(6) {
            case 0: journal.removeLast(random(journal.count))  // cut short
            case 1, 2:  // bytes flipped, lengths that lie among them
                for _ in 0..<(1 + random(3)) { journal[random(journal.count)] = UInt8(random(256)) }
            case 3: journal += (0..<random(8)).map { _ in UInt8(random(256)) }  // trailing garbage
            default: break
            }
            if random(8) == 0 { peer.sequence &+= UInt16(random(6)) }  // lost packets
            let outputs = harness.receive(peer.packet(message.wireBytes, journal: journal), from: peer.data, on: .data)
            for case .midi(let message, _, _) in outputs { heard.apply(message) }
        }
        // Most gaps were repaired (some journals were left whole, or mangled only where it parses).
        let repaired = harness.machine.sessions.first?.repairedGaps ?? 0
        #expect(
            repaired > 1_000, "\(repaired) gaps repaired of \(harness.machine.sessions.first?.lostPackets ?? 0) lost")
        let end = harness.receive(.end(token: peer.token, ssrc: peer.ssrc), from: peer.control, on: .control)
        for case .midi(let message, _, _) in end { heard.apply(message) }
        #expect(harness.machine.sessions.first?.isConnected != true)
        for channel in 0..<UInt8(16) {
            #expect(heard.soundingNotes(onChannel: channel).isEmpty, "channel \(channel + 1) sounds after BY")
            #expect((heard.controller(64, onChannel: channel) ?? 0) < 64, "channel \(channel + 1)'s pedal is down")
        }
        #expect(harness.machine.malformedCount == 0)
    }

    @Test("notes ended by note-off, note-on velocity 0 or all-notes-off are not released again")
    func endedNotesNotReleased() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        harness.receive(
            peer.packet([0x90, 60, 90, 0x00, 0x90, 61, 90, 0x00, 0x92, 62, 90, 0x00, 0x90, 63, 90]), from: peer.data,
            on: .data)
        harness.receive(peer.packet([0x80, 60, 0, 0x00, 0x90, 61, 0, 0x00, 0xB2, 123, 0]), from: peer.data, on: .data)
        let out = harness.receive(peer.packet([0xF8], skip: 1), from: peer.data, on: .data)
        #expect(out.midi == [[0x80, 63, 0], [0xF8]])
    }

    @Test("duplicates and late packets are dropped, not counted as losses or malformed")
    func duplicatesAndLate() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        let first = peer.packet([0x90, 60, 100])
        let second = peer.packet([0x90, 61, 100])
        #expect(harness.receive(first, from: peer.data, on: .data).midi.count == 1)
        #expect(harness.receive(second, from: peer.data, on: .data).midi.count == 1)
        #expect(harness.receive(second, from: peer.data, on: .data).midi.isEmpty)  // duplicate
        #expect(harness.receive(first, from: peer.data, on: .data).midi.isEmpty)  // late
        // Across the 16-bit wrap-around (the peer started at 0xFFF0): in order, no loss.
        var sequences: [UInt16] = []
        for note in 0..<20 {
            let out = harness.receive(peer.packet([0x90, UInt8(note), 1]), from: peer.data, on: .data)
            #expect(out.midi.count == 1)
            sequences.append(peer.sequence)
        }
        #expect(sequences.contains(0) && sequences.contains(0xFFFF))
        #expect(harness.machine.sessions.first?.lostPackets == 0 && harness.machine.malformedCount == 0)
    }

    @Test("macOS's captured packets (pymidi's test vectors): the gaps between them release notes")
    func macOSCaptures() {
        let apple = RTPMIDITestPeer(name: "mbook-session", ssrc: 0x47D8_1096)
        var harness = connected(apple)
        var midi: [[UInt8]] = []
        for packet in [Self.singleMIDIPacket, Self.multiMIDIPacket, Self.controlModeChangePacket] {
            midi += harness.receive(packet, from: apple.data, on: .data).midi
        }
        #expect(
            midi == [
                [0x90, 0x30, 0x26], [0x80, 0x30, 0], [0x90, 0x3E, 0x31], [0x90, 0x40, 0x3B], [0x80, 0x3E, 0],
                [0x80, 0x40, 0], [0xB0, 0x6C, 0x00],
            ])
        let exit = harness.receive(Self.exitPacket, from: apple.control, on: .control)
        #expect(exit.events == ["ended: mbook-session (10.0.0.2:5004)"])
        #expect(harness.machine.malformedCount == 0)
    }

    @Test("data from an unknown SSRC, from a half-open session or on the control port is counted as malformed")
    func misplacedData() {
        var peer = RTPMIDITestPeer()
        var harness = RTPMIDIHarness()
        harness.receive(peer.packet([0x90, 60, 1]), from: peer.data, on: .data)
        #expect(harness.machine.malformedCount == 1)
        harness.receive(
            AppleMIDICommand.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.control,
            on: .control)
        harness.receive(peer.packet([0x90, 60, 1]), from: peer.data, on: .data)
        #expect(harness.machine.malformedCount == 2)
        harness.receive(
            AppleMIDICommand.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.data, on: .data
        )
        #expect(harness.receive(peer.packet([0x90, 60, 1]), from: peer.control, on: .control).midi.isEmpty)
        #expect(harness.machine.malformedCount == 3)
        #expect(harness.receive(peer.packet([0x90, 60, 1]), from: peer.data, on: .data).midi == [[0x90, 60, 1]])
    }

    @Test("malformed and truncated datagrams are counted and dropped")
    func malformed() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        let valid = peer.packet([0x90, 60, 100, 0x00, 62, 100])
        var cases: [[UInt8]] = [[], [0xFF], [0xFF, 0xFF], [0xFF, 0xFF, 0x49, 0x4E], [0xFF, 0xFF, 0x5A, 0x5A, 0, 0]]
        cases += (0..<valid.count).map { Array(valid.prefix($0)) }
        cases.append(Array(AppleMIDICommand.clockSync(ssrc: 1, count: 0, timestamps: [1, 0, 0]).bytes.dropLast()))
        cases.append([0xFF, 0xFF] + Array("CK".utf8) + [0, 0, 0, 1, 3, 0, 0, 0] + Array(repeating: 0, count: 24))
        cases.append([0xFF, 0xFF] + Array("IN".utf8) + [0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0x41, 0])
        for bytes in cases {
            let out = harness.receive(bytes, from: peer.data, on: .data)
            #expect(out.isEmpty, "\(bytes)")
        }
        #expect(harness.machine.malformedCount == cases.count)
        #expect(harness.receive(valid, from: peer.data, on: .data).midi.count == 2)
    }

    @Test("4 000 fuzzed datagrams on both ports never trap; the session and a new one still work")
    func fuzz() {
        var peer = RTPMIDITestPeer()
        var harness = connected(peer)
        var random = SplitMix64(seed: 1)
        let valid = peer.packet([0x90, 0x3E, 0x31, 0x0A, 0x40, 0x3B, 0x00, 0xF0, 0x01, 0xF0])
        let command = AppleMIDICommand.invitation(token: 9, ssrc: 9, name: "fuzz").bytes
        var times: [UInt64] = []
        var events: [String] = []
        for index in 0..<4_000 {
            var bytes: [UInt8]
            switch index % 5 {
            case 0:
                bytes = (0..<Int.random(in: 0..<80, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            case 1: bytes = Array(valid.prefix(Int.random(in: 0..<valid.count, using: &random)))
            case 2:
                // Any sequence number (losses, duplicates), then the command list mutated.
                bytes = valid
                bytes[2] = UInt8.random(in: 0...255, using: &random)
                bytes[3] = UInt8.random(in: 0...255, using: &random)
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    bytes[Int.random(in: 12..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 3:
                bytes = command
                bytes[Int.random(in: 2..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            default:
                bytes =
                    [0xFF, 0xFF]
                    + (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random)
                    }
            }
            let port: RTPMIDISessionMachine.Port = index / 5 % 2 == 0 ? .data : .control
            let out = harness.receive(bytes, from: peer.data, on: port)
            times += out.times
            events += out.events
            if index % 100 == 0 { times += harness.tick(after: 10_000_000).times }
        }
        #expect(harness.machine.malformedCount > 1_000)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "stamps went back")
        // Fuzzed names reach the events escaped: no control character for a terminal to obey.
        #expect(
            events.allSatisfy { !$0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } })
        // Whatever the fuzz did to the first session, a new peer connects and plays.
        var other = RTPMIDITestPeer(name: "after", control: RTPMIDIAddress(host: "10.0.0.7", port: 5004), ssrc: 0x7777)
        #expect(harness.connect(other).events == ["connected: after (10.0.0.7:5004)"])
        #expect(harness.receive(other.packet([0x90, 60, 1]), from: other.data, on: .data).midi == [[0x90, 60, 1]])
    }

    // pymidi's captures of macOS's packets (pymidi/tests/packets_test.py).
    static let singleMIDIPacket = bytes("8061427a4b9f303647d8109643903026204276000608006685")
    static let multiMIDIPacket = bytes("8061429a51d2dc8747d8109646903e310a403b21427c00090881673c250d50c8060880440e")
    static let controlModeChangePacket = bytes("80614ba55944067e47d8109643b06c00204ba0000948006c7f807708")
    static let exitPacket = bytes("ffff4259000000020000000047d81096")

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
        }
    }
}
