import MIDICore
import Testing

@testable import MIDIIO

/// The session protocol of `RTPMIDISessionMachine`, driven directly: no sockets, no clock.
@Suite("RTP-MIDI session state machine: the session protocol")
struct RTPMIDISessionMachineTests {
    typealias Command = AppleMIDICommand

    @Test("a peer's invitation is accepted on the control port, then on the data port, where the session opens")
    func responderHandshake() {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let ours = harness.machine.ssrc
        let invitation = Command.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name)
        let first = harness.receive(invitation, from: peer.control, on: .control)
        #expect(first.commands.map(\.command) == [.accept(token: peer.token, ssrc: ours, name: "Pianola")])
        #expect(first.commands.map(\.to) == [peer.control] && first.commands.map(\.from) == [.control])
        #expect(first.events.isEmpty)
        #expect(harness.machine.sessions.map(\.isConnected) == [false])

        let second = harness.receive(invitation, from: peer.data, on: .data)
        #expect(second.commands.map(\.command) == [.accept(token: peer.token, ssrc: ours, name: "Pianola")])
        #expect(second.commands.map(\.to) == [peer.data] && second.commands.map(\.from) == [.data])
        #expect(second.events == ["connected: keyboard (10.0.0.2:5004)"])
        #expect(second.sessions[peer.ssrc]?.isConnected == true)
        #expect(second.sessions[peer.ssrc]?.address == "10.0.0.2:5004")

        // The peer did not hear our OK and asks again: accepted again, no second "connected".
        let again = harness.receive(invitation, from: peer.data, on: .data)
        #expect(again.commands.count == 1 && again.events.isEmpty)
    }

    @Test("a data-port invitation without the control one first is refused")
    func dataInvitationFirst() {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let out = harness.receive(
            Command.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.data, on: .data)
        #expect(out.commands.map(\.command) == [.reject(token: peer.token, ssrc: harness.machine.ssrc)])
        #expect(out.commands.map(\.from) == [.data])
        #expect(harness.machine.sessions.isEmpty && out.events.isEmpty)
    }

    @Test("as the initiator: control port, then data port, then the session opens and clock sync starts")
    func initiatorHandshake() throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer(name: "Studio")
        harness.machine.invite(peer.control)
        let first = harness.machine.takeOutput().commands
        guard case .invitation(let token, let ours, "Pianola")? = first.first?.command else {
            Issue.record("no invitation: \(first)")
            return
        }
        #expect(first.count == 1 && first[0].to == peer.control && first[0].from == .control)
        #expect(ours == harness.machine.ssrc)

        // An answer with another token changes nothing.
        #expect(
            harness.receive(
                .accept(token: token &+ 1, ssrc: peer.ssrc, name: "Studio"), from: peer.control, on: .control
            ).isEmpty)
        let onData = harness.receive(
            .accept(token: token, ssrc: peer.ssrc, name: "Studio"), from: peer.control, on: .control)
        #expect(onData.commands.map(\.command) == [.invitation(token: token, ssrc: ours, name: "Pianola")])
        #expect(onData.commands.map(\.to) == [peer.data] && onData.commands.map(\.from) == [.data])

        let open = harness.receive(.accept(token: token, ssrc: peer.ssrc, name: "Studio"), from: peer.data, on: .data)
        #expect(open.events == ["connected: Studio (10.0.0.2:5004)"])
        #expect(open.sessions[peer.ssrc]?.isConnected == true)
        #expect(
            open.commands.map(\.command) == [
                .clockSync(ssrc: ours, count: 0, timestamps: [harness.now / 100_000, 0, 0])
            ]
        )
        #expect(open.commands.map(\.to) == [peer.data])
    }

    @Test("clock sync: count 0 is answered with count 1, count 1 with count 2; count 2 and the control port are not")
    func clockSyncLegs() {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        harness.connect(peer)
        let ours = harness.machine.ssrc
        let first = harness.receive(
            .clockSync(ssrc: peer.ssrc, count: 0, timestamps: [1234, 0, 0]), from: peer.data, on: .data)
        #expect(
            first.commands.map(\.command) == [
                .clockSync(ssrc: ours, count: 1, timestamps: [1234, harness.now / 100_000, 0])
            ])
        #expect(first.commands.map(\.to) == [peer.data] && first.commands.map(\.from) == [.data])
        let third = harness.receive(
            .clockSync(ssrc: peer.ssrc, count: 2, timestamps: [1234, 5678, 9999]), from: peer.data, on: .data)
        #expect(third.isEmpty)
        let second = harness.receive(
            .clockSync(ssrc: peer.ssrc, count: 1, timestamps: [42, 43, 0]), from: peer.data, on: .data)
        #expect(
            second.commands.map(\.command) == [
                .clockSync(ssrc: ours, count: 2, timestamps: [42, 43, harness.now / 100_000])
            ])
        #expect(
            harness.receive(
                .clockSync(ssrc: peer.ssrc, count: 0, timestamps: [1, 0, 0]), from: peer.control, on: .control
            ).isEmpty)
        // Nobody we know: not answered.
        let stranger = RTPMIDIAddress(host: "10.0.0.3", port: 7001)
        #expect(
            harness.receive(.clockSync(ssrc: 99, count: 0, timestamps: [1, 0, 0]), from: stranger, on: .data).isEmpty)
    }

    @Test("the initiator synchronizes clocks again every 10 seconds")
    func periodicSync() throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let token = try harness.invite(peer.control)
        harness.receive(.accept(token: token, ssrc: peer.ssrc, name: peer.name), from: peer.control, on: .control)
        harness.receive(.accept(token: token, ssrc: peer.ssrc, name: peer.name), from: peer.data, on: .data)
        var syncs: [Int] = []
        for second in 1...25 {
            // (The peer answers each sync, which keeps the session alive.)
            let out = harness.tick()
            if case .clockSync(_, 0, _)? = out.commands.first?.command {
                syncs.append(second)
                harness.receive(
                    .clockSync(ssrc: peer.ssrc, count: 1, timestamps: [1, 2, 0]), from: peer.data, on: .data, after: 0)
            }
        }
        #expect(syncs == [10, 20])
    }

    @Test("a peer whose data port has an SSRC of its own (pymidi) is found by its data port's address")
    func pymidiDataSSRC() throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer(name: "pymidi", ssrc: 0xAAAA_0001)
        let dataSSRC: UInt32 = 0xBBBB_0002
        let token = try harness.invite(peer.control)
        let ours = harness.machine.ssrc
        harness.receive(.accept(token: token, ssrc: peer.ssrc, name: "pymidi"), from: peer.control, on: .control)
        let open = harness.receive(.accept(token: token, ssrc: dataSSRC, name: "pymidi"), from: peer.data, on: .data)
        #expect(open.events == ["connected: pymidi (10.0.0.2:5004)"])
        #expect(harness.machine.sessions.map(\.ssrc) == [peer.ssrc])
        let answer = harness.receive(
            .clockSync(ssrc: dataSSRC, count: 1, timestamps: [5, 6, 0]), from: peer.data, on: .data)
        #expect(
            answer.commands.map(\.command) == [
                .clockSync(ssrc: ours, count: 2, timestamps: [5, 6, harness.now / 100_000])
            ])
        // The same SSRC from another address is nobody's.
        let elsewhere = RTPMIDIAddress(host: "10.0.0.2", port: 6000)
        #expect(
            harness.receive(.clockSync(ssrc: dataSSRC, count: 0, timestamps: [1, 0, 0]), from: elsewhere, on: .data)
                .isEmpty)
    }

    @Test("the allow list admits addresses and CIDR ranges, never a session name, which anyone can claim")
    func allowList() throws {
        let allow = try ["10.0.0.9", "192.168.1.0/24"].map { try #require(RTPMIDIAddressRange($0)) }
        var harness = RTPMIDIHarness(allow: allow)
        // A stranger naming itself after an allowed address (before, names were matched too:
        // `--rtpmidi-allow friend` let anyone called "friend" in).
        let stranger = RTPMIDITestPeer(name: "10.0.0.9")
        let refused = harness.connect(stranger)
        #expect(
            refused.commands.map(\.command)
                == Array(repeating: .reject(token: stranger.token, ssrc: harness.machine.ssrc), count: 2))
        #expect(refused.events == ["refused: 10.0.0.9 (10.0.0.2:5004)", "refused: 10.0.0.9 (10.0.0.2:5005)"])
        #expect(harness.machine.sessions.isEmpty)
        let byAddress = harness.connect(
            RTPMIDITestPeer(name: "anyone", control: RTPMIDIAddress(host: "10.0.0.9", port: 5004), ssrc: 3))
        #expect(byAddress.events == ["connected: anyone (10.0.0.9:5004)"])
        let byRange = harness.connect(
            RTPMIDITestPeer(name: "lan", control: RTPMIDIAddress(host: "192.168.1.77", port: 6000), ssrc: 4))
        #expect(byRange.events == ["connected: lan (192.168.1.77:6000)"])
        let outside = harness.connect(
            RTPMIDITestPeer(name: "wan", control: RTPMIDIAddress(host: "192.168.2.77", port: 6000), ssrc: 5))
        #expect(outside.events.first == "refused: wan (192.168.2.77:6000)")
    }

    @Test(
        "an unanswered invitation is sent each tick, ten times, then given up (data port: after the control port's OK)",
        arguments: [RTPMIDISessionMachine.Port.control, .data])
    func invitationRetries(port: RTPMIDISessionMachine.Port) throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let token = try harness.invite(peer.control)  // the first
        if port == .data {
            // The first on the data port goes with the control port's OK.
            harness.receive(.accept(token: token, ssrc: peer.ssrc, name: peer.name), from: peer.control, on: .control)
        }
        let target = port == .control ? peer.control : peer.data
        let (sent, events) = harness.ticks(15) {
            if case .invitation = $0.command { $0.to == target && $0.from == port } else { false }
        }
        #expect(1 + sent == RTPMIDISessionMachine.invitationAttempts)
        #expect(events == ["no answer from 10.0.0.2:5004"])
    }

    @Test("a refused invitation is reported and not repeated")
    func refusedInvitation() throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let token = try harness.invite(peer.control)
        #expect(harness.receive(.reject(token: token &+ 1, ssrc: peer.ssrc), from: peer.control, on: .control).isEmpty)
        let out = harness.receive(.reject(token: token, ssrc: peer.ssrc), from: peer.control, on: .control)
        #expect(out.events == ["refused by 10.0.0.2:5004"])
        #expect(harness.tick().isEmpty)
    }

    @Test("BY from a peer ends its session and releases the note it held and its pedal")
    func byWithNoteHeld() {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        harness.receive(peer.packet([0x90, 72, 80, 0x00, 0xB0, 64, 127]), from: peer.data, on: .data)
        let out = harness.receive(.end(token: peer.token, ssrc: peer.ssrc), from: peer.control, on: .control)
        #expect(out.midi == [[0x80, 72, 0], [0xB0, 64, 0]])
        #expect(out.times.allSatisfy { $0 == harness.now })
        #expect(out.events == ["ended: keyboard (10.0.0.2:5004)"])
        #expect(out.sessions[peer.ssrc]?.isConnected == false)
        #expect(harness.machine.sessions.isEmpty)
        // Its packets now come from nobody.
        let late = harness.receive(peer.packet([0x90, 60, 1]), from: peer.data, on: .data)
        #expect(late.midi.isEmpty && harness.machine.malformedCount == 1)
    }

    @Test("BY from a peer this side is still inviting ends the invitation")
    func byDuringInvitation() throws {
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer()
        let token = try harness.invite(peer.control)
        let out = harness.receive(.end(token: token, ssrc: peer.ssrc), from: peer.control, on: .control)
        #expect(out.events == ["ended by 10.0.0.2:5004"])
        #expect(harness.tick().isEmpty)
    }

    @Test("a silent session times out and its notes are released; clock sync keeps it alive")
    func timeout() {
        var harness = RTPMIDIHarness(timeout: .seconds(2))
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        harness.receive(peer.packet([0x90, 75, 70]), from: peer.data, on: .data)
        #expect(harness.tick().events.isEmpty)
        harness.receive(
            .clockSync(ssrc: peer.ssrc, count: 0, timestamps: [1, 0, 0]), from: peer.data, on: .data, after: 500_000_000
        )
        #expect(harness.tick(after: 1_500_000_000).events.isEmpty)  // 1.5 s after the sync
        #expect(harness.tick(after: 500_000_000).events.isEmpty)  // 2 s: not more than the timeout yet
        let out = harness.tick(after: 1_000_000)
        #expect(out.events == ["timed out: keyboard (10.0.0.2:5004)"])
        #expect(out.midi == [[0x80, 75, 0]])
        #expect(harness.machine.sessions.isEmpty)
    }

    @Test("receiver feedback: once a tick after new data, the sequence number in the upper 16 bits")
    func receiverFeedback() {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        #expect(harness.tick().commands.isEmpty)  // nothing received yet
        harness.receive(peer.packet([0x90, 60, 100]), from: peer.data, on: .data)
        harness.receive(peer.packet([0x80, 60, 0]), from: peer.data, on: .data)
        let out = harness.tick().commands
        #expect(
            out.map(\.command) == [.receiverFeedback(ssrc: harness.machine.ssrc, sequence: UInt32(peer.sequence) << 16)]
        )
        #expect(out.map(\.to) == [peer.control] && out.map(\.from) == [.control])
        #expect(harness.tick().commands.isEmpty)  // nothing new
        harness.receive(peer.packet([0x90, 61, 100]), from: peer.data, on: .data)
        #expect(
            harness.tick().commands.map(\.command) == [
                .receiverFeedback(ssrc: harness.machine.ssrc, sequence: UInt32(peer.sequence) << 16)
            ])
    }

    @Test("ending all: BY to each session and each half-open invitation, notes released, nothing after")
    func endAll() throws {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        harness.receive(peer.packet([0x90, 60, 100]), from: peer.data, on: .data)
        let halfOpen = RTPMIDITestPeer(control: RTPMIDIAddress(host: "10.0.0.5", port: 5004), ssrc: 5)
        let token = try harness.invite(halfOpen.control)
        harness.receive(.accept(token: token, ssrc: halfOpen.ssrc, name: "half"), from: halfOpen.control, on: .control)
        harness.machine.invite(RTPMIDIAddress(host: "10.0.0.6", port: 5004))  // never answered
        _ = harness.machine.takeOutput()
        harness.machine.endAll(now: harness.now)
        let out = harness.machine.takeOutput()
        let ours = harness.machine.ssrc
        #expect(
            Set(out.commands.map { "\($0.command) \($0.to) \($0.from)" })
                == [
                    "\(Command.end(token: peer.token, ssrc: ours)) 10.0.0.2:5004 control",
                    "\(Command.end(token: token, ssrc: ours)) 10.0.0.5:5004 control",
                ])
        #expect(out.midi == [[0x80, 60, 0]])
        #expect(out.events == ["ended: keyboard (10.0.0.2:5004)"])
        #expect(harness.tick().isEmpty)
    }

    @Test("the same seed gives the same SSRC and tokens; other seeds others")
    func seeded() {
        var first = RTPMIDISessionMachine(name: "A", seed: 1)
        var second = RTPMIDISessionMachine(name: "A", seed: 1)
        let other = RTPMIDISessionMachine(name: "A", seed: 2)
        let peer = RTPMIDIAddress(host: "10.0.0.2", port: 5004)
        first.invite(peer)
        second.invite(peer)
        #expect(first.ssrc == second.ssrc && first.ssrc != other.ssrc && first.ssrc != 0)
        #expect(first.takeOutput() == second.takeOutput())
    }
}
