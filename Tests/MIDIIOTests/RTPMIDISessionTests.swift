import Foundation
import MIDICore
import TestSupport
import Testing

@testable import MIDIIO

@Suite("RTP-MIDI sessions on loopback")
struct RTPMIDISessionTests {
    /// Polls `condition` for up to `seconds`.
    func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test("one listener invites another: both see the session; stopping ends it on the other side")
    func initiatorAndResponder() throws {
        let host = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Host")
        let guest = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Guest")
        try host.start()
        try guest.start()
        // (By name: `localhost` also has an IPv6 address; the IPv4 one is taken.)
        try guest.invite(host: "localhost", port: host.port)
        #expect(eventually(5) { host.sessions.contains { $0.name == "Guest" && $0.isConnected } })
        #expect(eventually(5) { guest.sessions.contains { $0.name == "Host" && $0.isConnected } })
        #expect(guest.takeEvents().contains { $0.hasPrefix("connected: Host (127.0.0.1:\(host.port))") })
        guest.stop()  // BY to the host
        #expect(eventually(5) { host.takeEvents().contains { $0.hasPrefix("ended: Guest") } })
        host.stop()
    }

    @Test("send refuses a batch holding a number out of MIDI's range, naming it; nothing of it arrives")
    func outOfRangeRefused() throws {
        let host = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Host")
        let guest = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Guest")
        try host.start()
        try guest.start()
        defer {
            guest.stop()
            host.stop()
        }
        try guest.invite(host: "127.0.0.1", port: host.port)
        #expect(eventually(5) { host.sessions.contains { $0.name == "Guest" && $0.isConnected } })
        #expect(eventually(5) { guest.sessions.contains { $0.name == "Host" && $0.isConnected } })
        #expect(throws: MIDIValueError(field: "note", value: 250, range: 0...127)) {
            try guest.send([.noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 3, note: 250, velocity: 1)])
        }
        try guest.send([.noteOn(channel: 1, note: 62, velocity: 90)])
        #expect(eventually(5) { host.queue.firstArrival != nil })
        // The first message to arrive is the one sent after the refused batch.
        #expect(host.queue.withFirst { $0.message } == .noteOn(channel: 1, note: 62, velocity: 90))
    }

    @Test("a port another listener holds is refused, not shared (its datagrams would go astray)")
    func portInUse() throws {
        let first = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "First")
        try first.start()
        defer { first.stop() }
        for port in [first.port, first.port - 1] {
            let second = RTPMIDIListener(host: "127.0.0.1", port: port, name: "Second")
            #expect(throws: MIDIIOError.self, "port \(port) was bound twice") { try second.start() }
        }
        // Random pairs are tried until one is free.
        let third = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Third")
        try third.start()
        #expect(third.port != first.port && third.port + 1 != first.port && third.port != first.port + 1)
        third.stop()
    }

    @Test("a session that goes silent is ended by the listener's own timer after its timeout")
    func timeoutThroughTheTimer() throws {
        let host = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Host", sessionTimeout: .seconds(1))
        let guest = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Guest")
        try host.start()
        try guest.start()
        try guest.invite(host: "127.0.0.1", port: host.port)
        #expect(eventually(5) { host.sessions.contains { $0.name == "Guest" && $0.isConnected } })
        // The guest says nothing more until its next clock sync, 10 s on: the host ends the session.
        var events: [String] = []
        #expect(
            eventually(5) {
                events += host.takeEvents()
                return events.contains { $0.hasPrefix("timed out: Guest (127.0.0.1:\(guest.port))") }
            }, "\(events)")
        #expect(host.sessions.contains { $0.name == "Guest" && !$0.isConnected })
        guest.stop()
        host.stop()
    }

    @Test("a refused invitation and bad hosts are reported (typed errors for the library)")
    func refusedAndUnknown() throws {
        let host = RTPMIDIListener(
            host: "127.0.0.1", port: 0, name: "Host", allow: [try #require(RTPMIDIAddressRange("192.0.2.1"))])
        let guest = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Guest")
        #expect(throws: MIDIIOError.self) { try guest.invite(host: "127.0.0.1", port: 5004) }  // not started
        try host.start()
        try guest.start()
        try guest.invite(host: "127.0.0.1", port: host.port)
        #expect(eventually(5) { guest.takeEvents().contains("refused by 127.0.0.1:\(host.port)") })
        #expect(guest.sessions.isEmpty && host.sessions.isEmpty)
        do {
            try guest.invite(host: "no-such-host.invalid", port: 5004)
            Issue.record("an unknown host was accepted")
        } catch {
            #expect(error.description.contains("no-such-host.invalid"), "\(error)")
        }
        #expect(throws: MIDIIOError.self) { try guest.invite(host: "127.0.0.1", port: 70_000) }
        do {
            try guest.invite(host: "::1", port: 5004)
            Issue.record("an IPv6 peer was accepted by IPv4 ports")
        } catch {
            #expect(error.description.contains("IPv4 peers only"), "\(error)")
        }
        guest.stop()
        host.stop()
    }

    @Test("over loopback: a third party's packets and BY with a session's SSRC are dropped; the peer's play")
    func thirdParty() throws {
        let host = RTPMIDIListener(
            host: "127.0.0.1", port: 0, name: "Host", allow: [try #require(RTPMIDIAddressRange("127.0.0.1"))])
        try host.start()
        defer { host.stop() }
        let peer = try LoopbackUDPSocket.pair()
        let intruder = try LoopbackUDPSocket.pair()
        let ssrc: UInt32 = 0x5EED_0001
        let token: UInt32 = 0x0C0F_FEE0
        // The name of issue 41, which cleared the operator's screen.
        let invitation = AppleMIDICommand.invitation(
            token: token, ssrc: ssrc, name: "\u{1B}[2J\u{1B}]0;owned\u{07}Trusted")
        for (socket, port) in [(peer.control, host.port), (peer.data, host.port + 1)] {
            socket.send(invitation.bytes, to: port)
            let answer = socket.receive(within: 5).flatMap { try? AppleMIDICommand(parsing: $0) }
            guard case .accept(token, _, "Host")? = answer else {
                Issue.record("invitation on port \(port): \(String(describing: answer))")
                return
            }
        }
        #expect(eventually(5) { host.sessions.contains { $0.ssrc == ssrc && $0.isConnected } })
        #expect(
            host.takeEvents() == [#"connected: \x1b[2J\x1b]0;owned\x07Trusted (127.0.0.1:\#(peer.control.port))"#])

        peer.data.send(RTPMIDITestPeer.packet([0x90, 60, 100], sequence: 1, ssrc: ssrc), to: host.port + 1)
        // 20 notes with the session's SSRC and the sequence numbers that come next, from another
        // socket pair on the same host; then its BY, and receiver feedback.
        for index in 0..<20 {
            let socket = index % 2 == 0 ? intruder.data : intruder.control
            let packet = RTPMIDITestPeer.packet(
                [0x90, UInt8(70 + index), 127], sequence: UInt16(2 + index), ssrc: ssrc)
            socket.send(packet, to: host.port + 1)
        }
        intruder.control.send(AppleMIDICommand.end(token: token, ssrc: ssrc).bytes, to: host.port)
        intruder.control.send(AppleMIDICommand.receiverFeedback(ssrc: ssrc, sequence: 5 << 16).bytes, to: host.port)
        #expect(eventually(5) { host.malformedPacketCount == 22 }, "\(host.malformedPacketCount) dropped")
        peer.data.send(RTPMIDITestPeer.packet([0x80, 60, 0], sequence: 2, ssrc: ssrc), to: host.port + 1)
        #expect(eventually(5) { host.sessions.first?.messageCount == 2 })
        let session = try #require(host.sessions.first)
        #expect(session.isConnected && session.lostPackets == 0 && host.sessions.count == 1, "\(session)")
        #expect(host.takeEvents().isEmpty)

        // The peer's own BY ends it.
        peer.control.send(AppleMIDICommand.end(token: token, ssrc: ssrc).bytes, to: host.port)
        #expect(eventually(5) { host.sessions.first?.isConnected == false })
        #expect(host.takeEvents().first?.hasPrefix(#"ended: \x1b[2J\x1b]0;owned\x07Trusted"#) == true)
    }
}
