import Testing

@testable import MIDICore
@testable import MIDIIO

/// What reaches a log of the session names peers give (`RTPMIDISessionMachine`'s events): any
/// text the peer chose, escaped.
@Suite("RTP-MIDI session state machine: peers' names in events")
struct RTPMIDISessionNameTests {
    typealias Command = AppleMIDICommand

    /// The issue's name: it cleared the operator's screen and retitled the terminal window.
    static let hostile = "\u{1B}[2J\u{1B}]0;owned\u{07}Trusted"

    @Test("a peer's name reaches the events escaped: refused, connected, ended")
    func escapedNames() throws {
        var refusing = RTPMIDIHarness(allow: [try #require(RTPMIDIAddressRange("192.0.2.1"))])
        let stranger = RTPMIDITestPeer(name: Self.hostile)
        #expect(
            refusing.connect(stranger).events == [
                #"refused: \x1b[2J\x1b]0;owned\x07Trusted (10.0.0.2:5004)"#,
                #"refused: \x1b[2J\x1b]0;owned\x07Trusted (10.0.0.2:5005)"#,
            ])
        var harness = RTPMIDIHarness()
        let peer = RTPMIDITestPeer(name: "line\nrefused: \u{202E}x\u{9B}")
        #expect(harness.connect(peer).events == [#"connected: line\x0arefused: \u{202e}x\u{9b} (10.0.0.2:5004)"#])
        // The session keeps the name as it came (data, for whoever prints it to escape).
        #expect(harness.machine.sessions.map(\.name) == [peer.name])
        let out = harness.receive(.end(token: peer.token, ssrc: peer.ssrc), from: peer.control, on: .control)
        #expect(out.events == [#"ended: line\x0arefused: \u{202e}x\u{9b} (10.0.0.2:5004)"#])
    }

    @Test("invitations whose names hold any byte, or invalid UTF-8, give events with nothing a terminal obeys")
    func everyByteInNames() {
        var harness = RTPMIDIHarness()
        var events: [String] = []
        var names: [[UInt8]] = (1...255).map { [0x41, UInt8($0), 0x42] }
        names += [
            [0xC2, 0x9B, 0x33, 0x31, 0x6D], [0xE2, 0x80, 0xAE], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0],
        ]
        for (index, name) in names.enumerated() {
            // A session command's bytes as a peer sends them: IN, version 2, token, SSRC, name, NUL.
            var bytes = Command.invitation(token: 1, ssrc: UInt32(index + 1), name: "").bytes.dropLast()
            bytes += name + [0]
            let control = RTPMIDIAddress(host: "10.0.1.\(index % 250)", port: 5004)
            events += harness.receive(Array(bytes), from: control, on: .control).events
            events += harness.receive(Array(bytes), from: control.nextPort, on: .data).events
        }
        #expect(events.count == names.count)
        let obeyed = events.filter { line in
            line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || PrintableText.needsEscape($0) }
        }
        #expect(obeyed.isEmpty, "\(obeyed.map { Array($0.utf8) })")
    }
}
