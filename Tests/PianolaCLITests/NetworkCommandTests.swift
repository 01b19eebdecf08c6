import Foundation
import MIDIIO
import TestSupport
import Testing

/// `pianola live --rtpmidi` as an operator sees it: where it listens and who may join, and what
/// a peer's session name does on standard error. The peer is played by hand, over real UDP
/// sockets on 127.0.0.1.
@Suite("Network MIDI on the command line", .serialized)
struct NetworkCommandTests {
    /// The name of issue 41: printed raw, it cleared the operator's screen and retitled the window.
    static let hostile = "\u{1B}[2J\u{1B}]0;owned\u{07}Trusted"

    /// Runs `live` on the null device listening on `host` (loopback by default), on a free pair of
    /// ports, with `arguments`; sends
    /// the hostile peer's invitation on both ports (`peer`'s sockets), then its BY; the exit status,
    /// standard error, the listening port and the answers to the invitation.
    func liveSession(
        on host: String = "127.0.0.1", _ arguments: [String],
        peer: (control: LoopbackUDPSocket, data: LoopbackUDPSocket)
    ) throws -> (status: Int32, stderr: String, port: Int, answers: [AppleMIDICommand?]) {
        let port = try LoopbackUDPSocket.pair().control.port  // (free a moment ago; closed again)
        return try withTemporaryFolder("network") { folder in
            let log = folder + "/live.err"
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
            process.arguments =
                ["live", "-d", "null", "-s", bundledFontPath, "--rtpmidi", "\(host):\(port)", "--no-mdns"] + arguments
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            func said() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            let deadline = Date().addingTimeInterval(30)
            while !said().contains("network sessions") && process.isRunning && Date() < deadline { usleep(20_000) }
            let invitation = AppleMIDICommand.invitation(token: 0x4141, ssrc: 0x4242, name: Self.hostile).bytes
            var answers: [AppleMIDICommand?] = []
            for (socket, target) in [(peer.control, port), (peer.data, port + 1)] {
                socket.send(invitation, to: target)
                answers.append(socket.receive(within: 5).flatMap { try? AppleMIDICommand(parsing: $0) })
            }
            peer.control.send(AppleMIDICommand.end(token: 0x4141, ssrc: 0x4242).bytes, to: port)
            usleep(500_000)
            process.terminate()
            process.waitUntilExit()
            return (process.terminationStatus, said(), port, answers)
        }
    }

    @Test("live --rtpmidi says where it listens and that anyone may join; a peer's name is printed escaped")
    func anyoneAndEscapedNames() throws {
        let peer = try LoopbackUDPSocket.pair()
        // (Every interface, as `--rtpmidi PORT` listens: reached here through loopback.)
        let run = try liveSession(on: "0.0.0.0", [], peer: peer)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "MIDI input: network sessions on 0.0.0.0:\(run.port) and \(run.port + 1) (every interface) as 'Pianola': anyone may join (--rtpmidi-allow ADDRESS[/BITS] restricts)\n"
            ), "\(run.stderr)")
        let shown = #"\x1b[2J\x1b]0;owned\x07Trusted"#
        #expect(run.stderr.contains("network MIDI: connected: \(shown) (127.0.0.1:\(peer.control.port))\n"))
        #expect(run.stderr.contains("network MIDI: ended: \(shown) (127.0.0.1:\(peer.control.port))\n"))
        // Nothing for the terminal to obey (standard error is a file here: no status line).
        #expect(!run.stderr.utf8.contains(0x1B) && !run.stderr.utf8.contains(0x07), "\(Array(run.stderr.utf8))")
    }

    @Test("--rtpmidi-allow: who may join is said; a peer from elsewhere is refused, its name printed escaped")
    func refusedAndEscaped() throws {
        let peer = try LoopbackUDPSocket.pair()
        let run = try liveSession(["--rtpmidi-allow", "192.0.2.0/24", "--rtpmidi-allow", "10.1.2.3"], peer: peer)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "network sessions on 127.0.0.1:\(run.port) and \(run.port + 1) as 'Pianola': only 192.0.2.0/24, 10.1.2.3 may join\n"
            ), "\(run.stderr)")
        #expect(run.answers.allSatisfy { if case .reject(0x4141, _)? = $0 { true } else { false } }, "\(run.answers)")
        let shown = #"\x1b[2J\x1b]0;owned\x07Trusted"#
        #expect(run.stderr.contains("network MIDI: refused: \(shown) (127.0.0.1:\(peer.control.port))\n"))
        #expect(!run.stderr.utf8.contains(0x1B) && !run.stderr.utf8.contains(0x07), "\(Array(run.stderr.utf8))")
    }

    @Test("--rtpmidi-allow takes addresses and CIDR ranges; a session name is refused: it is not access control")
    func allowTakesAddresses() throws {
        let name = try runPianola(["live", "--rtpmidi", "5004", "--rtpmidi-allow", "friend"])
        #expect(name.status == 64, "\(name.stderr)")
        #expect(name.stderr.contains("--rtpmidi-allow must be an IP address or a CIDR range"), "\(name.stderr)")
        #expect(name.stderr.contains("a session name is not access control"), "\(name.stderr)")
        let help = try runPianola(["live", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(
            separator: " ")
        #expect(help.contains("--rtpmidi-allow <addr[/bits]>"), "\(help)")
        #expect(help.contains("Not a session name: anyone can claim any name."), "\(help)")
    }
}
