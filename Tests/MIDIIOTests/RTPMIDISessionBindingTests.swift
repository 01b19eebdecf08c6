import Testing

@testable import MIDIIO

/// Who may speak for a session (`RTPMIDISessionMachine`): only the endpoints it was opened with.
@Suite("RTP-MIDI session state machine: sessions bound to their peers' ports")
struct RTPMIDISessionBindingTests {
    typealias Command = AppleMIDICommand

    /// A third party on the peer's host (another port) and one elsewhere.
    static let sameHost = RTPMIDIAddress(host: "10.0.0.2", port: 6001)
    static let elsewhere = RTPMIDIAddress(host: "10.0.0.66", port: 5005)

    @Test("packets with a session's SSRC from another port or host are dropped and counted, not played")
    func injectedPackets() {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        harness.receive(peer.packet([0x90, 60, 100]), from: peer.data, on: .data)
        // 20 notes injected with the session's SSRC and the sequence numbers that come next (the
        // issue's attack: before, all 20 were played).
        var forger = peer
        var injected: [[UInt8]] = []
        for index in 0..<20 {
            let source = index % 2 == 0 ? Self.sameHost : Self.elsewhere
            injected += harness.receive(forger.packet([0x90, UInt8(70 + index), 127]), from: source, on: .data).midi
        }
        // From the peer's control port to our data port: not its data port either.
        injected += harness.receive(forger.packet([0x90, 99, 127]), from: peer.control, on: .data).midi
        #expect(injected.isEmpty)
        #expect(harness.machine.malformedCount == 21)
        // The peer's own next packet plays on, no gap seen (the forged numbers were never taken).
        let next = harness.receive(peer.packet([0x80, 60, 0]), from: peer.data, on: .data)
        #expect(next.midi == [[0x80, 60, 0]])
        #expect(harness.machine.sessions.first?.lostPackets == 0)
        #expect(harness.machine.sessions.first?.messageCount == 2)
    }

    @Test("BY, clock sync and receiver feedback with a session's SSRC from elsewhere change nothing")
    func forgedCommands() {
        var harness = RTPMIDIHarness(timeout: .seconds(2))
        var peer = RTPMIDITestPeer()
        harness.connect(peer)
        harness.receive(peer.packet([0x90, 64, 90]), from: peer.data, on: .data)
        let bye = Command.end(token: peer.token, ssrc: peer.ssrc)
        for (source, port) in [
            (Self.elsewhere, RTPMIDISessionMachine.Port.control), (Self.sameHost, .control),
            (peer.data.nextPort, .control), (Self.elsewhere, .data),
        ] {
            let out = harness.receive(bye, from: source, on: port)
            #expect(out.events.isEmpty && out.midi.isEmpty, "a BY from \(source) ended the session: \(out)")
        }
        #expect(harness.machine.sessions.map(\.isConnected) == [true])
        // A clock sync from elsewhere is not answered and does not keep the session alive.
        let sync = harness.receive(
            .clockSync(ssrc: peer.ssrc, count: 0, timestamps: [1, 0, 0]), from: Self.sameHost, on: .data,
            after: 1_500_000_000)
        #expect(sync.isEmpty)
        #expect(
            harness.receive(.receiverFeedback(ssrc: peer.ssrc, sequence: 1 << 16), from: Self.elsewhere, on: .control)
                .isEmpty)
        #expect(harness.machine.malformedCount == 6)
        // (2 s after the peer was last heard from: the forged sync did not count.)
        #expect(harness.tick(after: 600_000_000).events == ["timed out: keyboard (10.0.0.2:5004)"])

        // The peer's own BY, from its control port, ends its session.
        var again = RTPMIDIHarness()
        again.connect(peer)
        let out = again.receive(bye, from: peer.control, on: .control)
        #expect(out.events == ["ended: keyboard (10.0.0.2:5004)"])
    }

    @Test("an invitation claiming a session's SSRC from other ports is refused; the session stays bound")
    func hijackingInvitations() {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        let ours = harness.machine.ssrc
        let invitation = Command.invitation(token: 0xBAD, ssrc: peer.ssrc, name: "keyboard")
        // Half open (the control port accepted): a data-port invitation from another host does
        // not open it.
        harness.receive(
            .invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.control, on: .control)
        let early = harness.receive(invitation, from: Self.elsewhere, on: .data)
        #expect(early.commands.map(\.command) == [.reject(token: 0xBAD, ssrc: ours)] && early.events.isEmpty)
        #expect(harness.machine.sessions.map(\.isConnected) == [false])
        let open = harness.receive(
            .invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.data, on: .data)
        #expect(open.events == ["connected: keyboard (10.0.0.2:5004)"])
        // Open: another control port, or another data port, claiming the SSRC is refused.
        for (source, port) in [
            (Self.elsewhere, RTPMIDISessionMachine.Port.control), (Self.sameHost, .control), (Self.sameHost, .data),
        ] {
            let out = harness.receive(invitation, from: source, on: port)
            #expect(out.commands.map(\.command) == [.reject(token: 0xBAD, ssrc: ours)], "from \(source)")
            #expect(out.events.isEmpty && out.sessions.isEmpty)
        }
        #expect(harness.machine.malformedCount == 4)
        #expect(harness.machine.sessions.map(\.address) == ["10.0.0.2:5004"])
        // Receiver feedback still goes to the peer's control port; its packets still play.
        harness.receive(peer.packet([0x90, 60, 1]), from: peer.data, on: .data)
        let feedback = harness.tick().commands
        #expect(feedback.map(\.to) == [peer.control])
        // The peer asking again (it lost our OK) is still answered.
        let asked = harness.receive(
            .invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name), from: peer.data, on: .data)
        #expect(asked.commands.map(\.command) == [.accept(token: peer.token, ssrc: ours, name: "Pianola")])
    }

    @Test("a peer's data port may be another than control + 1 (a relay, NAT), on the same host")
    func dataPortElsewhere() {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer()
        let data = RTPMIDIAddress(host: "10.0.0.2", port: 40_123)
        let invitation = Command.invitation(token: peer.token, ssrc: peer.ssrc, name: peer.name)
        harness.receive(invitation, from: peer.control, on: .control)
        #expect(harness.receive(invitation, from: data, on: .data).events == ["connected: keyboard (10.0.0.2:5004)"])
        #expect(harness.receive(peer.packet([0x90, 60, 1]), from: data, on: .data).midi == [[0x90, 60, 1]])
        #expect(harness.receive(peer.packet([0x90, 61, 1]), from: peer.data, on: .data).midi.isEmpty)
        #expect(harness.machine.malformedCount == 1)
    }

    @Test("as the initiator: answers and BY from other ports than the ones invited count for nothing")
    func initiatorAnswersFromElsewhere() throws {
        var harness = RTPMIDIHarness()
        var peer = RTPMIDITestPeer(name: "Studio")
        let token = try harness.invite(peer.control)
        // A refusal, a BY or an acceptance with the right token from elsewhere: the invitation
        // goes on.
        #expect(harness.receive(.reject(token: token, ssrc: 1), from: Self.elsewhere, on: .control).isEmpty)
        #expect(harness.receive(.end(token: token, ssrc: 1), from: Self.elsewhere, on: .control).isEmpty)
        #expect(
            harness.receive(.accept(token: token, ssrc: 1, name: "evil"), from: Self.sameHost, on: .control).isEmpty)
        harness.receive(.accept(token: token, ssrc: peer.ssrc, name: "Studio"), from: peer.control, on: .control)
        #expect(
            harness.receive(.accept(token: token, ssrc: 1, name: "evil"), from: Self.elsewhere, on: .data).isEmpty)
        let open = harness.receive(.accept(token: token, ssrc: peer.ssrc, name: "Studio"), from: peer.data, on: .data)
        #expect(open.events == ["connected: Studio (10.0.0.2:5004)"])
        #expect(harness.machine.malformedCount == 4)
        // Its packets come from the data port invited, and from there only.
        #expect(harness.receive(peer.packet([0x90, 60, 1]), from: Self.sameHost, on: .data).midi.isEmpty)
        #expect(harness.receive(peer.packet([0x90, 61, 1]), from: peer.data, on: .data).midi == [[0x90, 61, 1]])
    }
}
