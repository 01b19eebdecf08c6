import Foundation
import SMF
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private JACK server for a test (a failure with the reason when there is none).
func jackServer() throws -> JACKServer { try JACKServer.started() }

/// `pianola ARGUMENTS` running against `server`: the process, and a pipe of its standard error.
func startPianola(_ arguments: [String], server: JACKServer) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(server.clientEnvironment) { $1 }
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return (process, errors)
}

/// Three notes after a second's rest (120 BPM, 480 ticks a beat: 960 ticks a second), ending at 2.2 s.
func writeShortSong(to path: String) throws {
    var events: [MIDIFile.Event] = []
    for (index, note) in [60, 64, 67].enumerated() {
        let start = 960 + index * 384
        events.append(MIDIFile.Event(tick: start, .channel(.noteOn(channel: 0, note: UInt8(note), velocity: 100))))
        events.append(MIDIFile.Event(tick: start + 300, .channel(.noteOff(channel: 0, note: UInt8(note), velocity: 0))))
    }
    events.sort { $0.tick < $1.tick }
    events.append(MIDIFile.Event(tick: 2_112, .meta(.endOfTrack)))
    try MIDIFile(format: .singleTrack, tracks: [MIDIFile.Track(events: events)]).write(to: path)
}

@Suite("pianola play --driver jack, against a real JACK server", .serialized)
struct JACKCommandTests {
    /// Runs `pianola` with `arguments` on a thread of its own against `server`; the result when it ends.
    final class Background: @unchecked Sendable {
        final class Outcome: Sendable {
            let value = Mutex<(status: Int32, stdout: String, stderr: String)?>(nil)
        }
        private let thread: Thread
        private let outcome = Outcome()

        init(_ arguments: [String], server: JACKServer) {
            let box = outcome
            thread = Thread {
                let result = try? runPianola(arguments, environment: server.clientEnvironment)
                box.value.withLock { $0 = result ?? (-1, "", "could not run pianola") }
            }
            thread.start()
        }

        /// Waits up to `seconds` for the run to end; its result, or nil if it still runs.
        func wait(seconds: Double) -> (status: Int32, stdout: String, stderr: String)? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let done = outcome.value.withLock({ $0 }) { return done }
                usleep(20_000)
            }
            return nil
        }
    }

    /// Waits up to 10 s for `port` to appear in `server`'s graph.
    func waitForPort(_ port: String, on server: JACKServer) -> Bool {
        for _ in 0..<500 {
            if server.ports().contains(port) { return true }
            usleep(20_000)
        }
        return false
    }

    @Test(
        "what JACK records of `play --driver jack` is `render` at the server's rate, sample for sample (jackd, PipeWire)",
        arguments: ["jackd", "PipeWire"])
    func playEqualsRender(serverKind: String) throws {
        let server = try serverKind == "jackd" ? jackServer() : JACKServer.startPipeWire().get()
        try withTemporaryFolder("jack") { directory in
            let song = directory + "/short.mid"
            try writeShortSong(to: song)
            let captured = directory + "/captured.wav"
            let rendered = try runPianola([
                "render", "-q", song, "-o", directory + "/rendered.wav", "-s", bundledFontPath, "--rate", "48000",
                "--format", "f32",
            ])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            let reference = try readFloatWAVSamples(directory + "/rendered.wav")
            let onsetReference = try #require(reference.firstIndex { abs($0) > 1e-4 })
            #expect((96_000..<96_128).contains(onsetReference), "the render's first note at sample \(onsetReference)")
            let count = 2 * Int(1.2 * 48_000)
            // An xrun (the server's cycle late while the machine is busy with other tests) costs the
            // recording a period, and so does a capture that falls behind (jack_capture under
            // PipeWire reports none to the client): one of up to three tries must be without an
            // underrun and equal the render sample for sample.
            var tries: [String] = []
            var equal = false
            for _ in 0..<3 where !equal {
                let play = Background(["play", song, "--driver", "jack", "-s", bundledFontPath], server: server)
                #expect(waitForPort("pianola:out_1", on: server), "the client's ports never appeared")
                // Connected to the server's physical playback ports (PipeWire's: its sink's).
                var connections: [String] = []
                for _ in 0..<50 where connections.isEmpty {
                    connections = server.connections(of: "pianola:out_1")
                    if connections.isEmpty { usleep(10_000) }
                }
                #expect(connections.first?.hasPrefix(server.playbackPrefix) == true, "\(connections)")
                unlink(captured)
                #expect(server.capture(["pianola:out_1", "pianola:out_2"], seconds: 2.6, to: captured) == 0)
                let result = try #require(play.wait(seconds: 20), "play did not end")
                #expect(result.status == 0, "\(result.stderr)")
                #expect(
                    result.stderr.contains("JACK: client pianola, 48000 Hz, \(server.periodFrames) frames"),
                    "\(result.stderr)")
                guard result.stderr.contains("short.mid: finished, 0 underruns") else {
                    tries.append("underruns")
                    continue
                }
                // The recording starts a little after the client (during the song's first second of
                // rest): the first note lines the two up (its first sample above −80 dBFS, the
                // synthesizer's reverb and chorus noise lying far below); from there to the last
                // note's end they agree.
                let heard = try readFloatWAVSamples(captured)
                guard let onsetHeard = heard.firstIndex(where: { abs($0) > 1e-4 }), heard.count >= onsetHeard + count
                else {
                    tries.append("\(heard.count) samples recorded, silent or short")
                    continue
                }
                let differing = (0..<count).filter { heard[onsetHeard + $0] != reference[onsetReference + $0] }.count
                tries.append("\(differing) of \(count) samples differ")
                equal = differing == 0
            }
            #expect(equal, "tries: \(tries)")
        }
    }

    @Test("the server killed while playing: one clear line, exit 1, no hang; no server: how to start one")
    func serverGone() throws {
        let server = try jackServer()
        try withTemporaryFolder("jack") { directory in
            let song = directory + "/short.mid"
            try writeShortSong(to: song)
            let play = Background(["play", song, "--driver", "jack", "-s", bundledFontPath, "--loop"], server: server)
            #expect(waitForPort("pianola:out_1", on: server))
            usleep(300_000)
            server.kill()
            let result = try #require(play.wait(seconds: 10), "play hung after the server went away")
            #expect(result.status == 1)
            let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("pianola:") }
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(lines.first?.hasPrefix("pianola: the JACK server stopped the stream") == true, "\(result.stderr)")

            let none = try runPianola(
                ["play", song, "--driver", "jack", "-s", bundledFontPath], environment: server.clientEnvironment
            )
            #expect(none.status == 1)
            #expect(none.stderr.hasPrefix("pianola: no JACK server is running: start one"), "\(none.stderr)")
            let noLibrary = try runPianola(
                ["play", song, "--driver", "jack", "-s", bundledFontPath],
                environment: ["PIANOLA_JACK_LIBRARY": "/nonexistent/libjack.so.0"])
            #expect(noLibrary.status == 1)
            #expect(noLibrary.stderr.contains("no JACK library"), "\(noLibrary.stderr)")
        }
    }

    @Test("live --driver jack: a JACK sequencer's notes sound and are recorded where they were sent")
    func liveFromJACKMIDI() throws {
        let server = try jackServer()
        try withTemporaryFolder("jack") { directory in
            // Middle C and E, 20 113 and 27 887 frames apart in a one-second loop.
            let sequencer = try server.client(
                "jack_midiseq", ["seq", "48000", "0", "60", "1000", "20113", "64", "1000"])
            defer { withExtendedLifetime(sequencer) {} }
            #expect(waitForPort("seq:out", on: server))

            // `devices` lists the server's ports, the sequencer's as a source for `live --connect`.
            let devices = try runPianola(["devices"], environment: server.clientEnvironment)
            let lines = devices.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
            #expect(lines.contains("seq:out MIDI output (live --driver jack --connect)"), "\(devices.stdout)")
            #expect(lines.contains("system:playback_1 audio input, physical"), "\(devices.stdout)")
            let json = try runPianola(["devices", "--json"], environment: server.clientEnvironment)
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
            #expect(entries.contains { $0["kind"] == "jack-port" && $0["name"] == "seq:out" }, "\(json.stdout)")

            let wrong = try runPianola(
                ["live", "--driver", "jack", "--connect", "sqe", "-s", bundledFontPath],
                environment: server.clientEnvironment)
            #expect(wrong.status == 1)
            #expect(wrong.stderr == "pianola: no JACK port 'sqe' (nearest: seq)\n", "\(wrong.stderr)")

            let take = directory + "/take.mid"
            let (live, errors) = try startPianola(
                ["live", "--driver", "jack", "--connect", "seq", "--record", take, "-s", bundledFontPath],
                server: server)
            #expect(waitForPort("pianola:midi_in", on: server))
            // The port is there from set-up; the session connects it when it starts.
            var connections: [String] = []
            for _ in 0..<250 where connections != ["seq:out"] {
                usleep(20_000)
                connections = server.connections(of: "pianola:midi_in")
            }
            #expect(connections == ["seq:out"])
            usleep(2_600_000)
            live.terminate()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            live.waitUntilExit()
            #expect(live.terminationStatus == 0, "\(stderr)")
            #expect(stderr.contains("MIDI input: JACK port pianola:midi_in"), "\(stderr)")
            let notes = try MIDIFile.read(path: take).file.tracks.flatMap { $0.notes() }
            #expect(notes.count >= 4, "\(notes)")
            // The recording keeps when each note sounds (3840 ticks a second): 20 113 and 27 887
            // frames apart at 48 kHz, 1676 and 2231 ticks, within a millisecond.
            let gaps = zip(notes.dropFirst(), notes).map { ($0.key, $0.startTick - $1.startTick) }
            for (key, gap) in gaps {
                let expected = key == 64 ? 20_113.0 / 48_000 * 3_840 : 27_887.0 / 48_000 * 3_840
                #expect(abs(Double(gap) - expected) <= 4, "gap \(gap) ticks before \(key)")
            }
        }
    }
}
