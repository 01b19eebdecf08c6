import Foundation
import SMF
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// 24 bars at 120 BPM in 4/4 (a bar is 2 s, bar 9 starts at 16 s): a program change and a
/// volume at the start (so that playing from bar 9 needs the chase), then a note on every beat,
/// half a beat long, each beat's key another.
func writeTransportSong(to path: String) throws {
    var events = [
        MIDIFile.Event(tick: 0, .channel(.programChange(channel: 0, program: 24))),
        MIDIFile.Event(tick: 0, .channel(.controlChange(channel: 0, controller: 7, value: 110))),
    ]
    for beat in 0..<96 {
        let key = UInt8(48 + (beat * 5) % 24)
        events.append(MIDIFile.Event(tick: beat * 480, .channel(.noteOn(channel: 0, note: key, velocity: 100))))
        events.append(MIDIFile.Event(tick: beat * 480 + 240, .channel(.noteOff(channel: 0, note: key, velocity: 0))))
    }
    events.sort { $0.tick < $1.tick }
    events.append(MIDIFile.Event(tick: 96 * 480, .meta(.endOfTrack)))
    try MIDIFile(format: .singleTrack, tracks: [MIDIFile.Track(events: events)]).write(to: path)
}

@Suite("pianola play --transport, against a real JACK server's transport", .serialized)
struct JACKTransportCommandTests {
    /// The bundled font without FluidSynth's reverb and chorus: their delay lines are modulated
    /// by oscillators that run from the synthesizer's creation, so a song located to after a
    /// wait would not meet a render that starts there (the library's transport tests do the same).
    static let synth = ["-s", bundledFontPath, "--synth-reverb", "off", "--synth-chorus", "off"]

    /// `pianola play ARGUMENTS --driver jack --no-autoconnect` against `server`, running.
    func startPlaying(_ arguments: [String], server: JACKServer) throws -> (Process, Pipe) {
        try startPianola(["play"] + arguments + ["--driver", "jack", "--no-autoconnect"] + Self.synth, server: server)
    }

    /// Waits up to `seconds` for `process` to end; whether it did.
    func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// The song rendered by `pianola render` at 48 kHz in float (the left channel), from `start` seconds.
    func rendered(_ song: String, from start: Double? = nil, in directory: String) throws -> [Float] {
        let output = directory + "/rendered-\(start ?? 0).wav"
        var arguments =
            [
                "render", "-q", song, "-o", output, "--rate", "48000", "--format", "f32",
            ] + Self.synth
        if let start { arguments += ["--start", String(start)] }
        let result = try runPianola(arguments)
        try #require(result.status == 0, "\(result.stderr)")
        let samples = try readFloatWAVSamples(output)
        return stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
    }

    /// What went wrong in one try (nothing: it passed). A cycle the server ran late (an xrun on a
    /// busy machine) shifts or spoils a recording, so each test has three tries.
    struct Problems {
        var list: [String] = []
        mutating func need(_ condition: Bool, _ what: @autoclosure () -> String) {
            if !condition { list.append(what()) }
        }
    }

    /// Up to three tries of `attempt`; the last one's problems are the test's.
    func threeTries(_ attempt: () throws -> Problems) rethrows {
        var problems = Problems()
        for _ in 0..<3 {
            problems = try attempt()
            if problems.list.isEmpty { return }
        }
        #expect(problems.list.isEmpty, "\(problems.list)")
    }

    @Test("follow: silent while the transport stands; from bar 9 when located and started; silent after the stop")
    func followsTheTransport() throws {
        let server = try jackServer()
        try withTemporaryFolder("jack-transport") { directory in
            let song = directory + "/bars.mid"
            try writeTransportSong(to: song)
            let reference = try rendered(song, from: 16, in: directory)
            try threeTries { try followOnce(server: server, song: song, reference: reference) }
        }
    }

    func followOnce(server: JACKServer, song: String, reference: [Float]) throws -> Problems {
        var problems = Problems()
        let (play, errors) = try startPlaying([song, "--transport", "follow"], server: server)
        defer { if play.isRunning { play.terminate() } }
        let probe = try TransportProbe(server: server.name)
        var connected = false
        for _ in 0..<250 where !connected {
            connected = probe.connect(["pianola:out_1", "pianola:out_2"])
            if !connected { usleep(20_000) }
        }
        try #require(connected, "pianola's ports never appeared")
        usleep(600_000)
        probe.locate(frame: 16 * 48_000)
        usleep(300_000)
        probe.start()
        usleep(2_000_000)
        probe.stop()
        usleep(1_500_000)
        kill(play.processIdentifier, SIGINT)
        #expect(waitForExit(play, seconds: 10), "play did not end on SIGINT")
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(play.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("JACK transport: following"), "\(stderr)")

        let (cycles, left, _) = probe.recording()
        guard let firstRolling = cycles.firstIndex(where: { $0.isRolling }),
            let lastRolling = cycles.lastIndex(where: { $0.isRolling })
        else { return Problems(list: ["the transport never rolled"]) }
        // Standing: nothing sounds (the song has not begun).
        let before = cycles[..<firstRolling].flatMap { left[$0.index..<($0.index + $0.count)] }
        problems.need(before.count > 0 && before.allSatisfy { abs($0) < 1e-6 }, "sound before the transport rolled")
        // Rolling from bar 9: what `render --start 16` makes, cycle by cycle at the transport's frame.
        problems.need(cycles[firstRolling].frame == 16 * 48_000, "rolled from \(cycles[firstRolling].frame)")
        var worst: Float = 0
        var compared = 0
        for cycle in cycles[firstRolling...lastRolling] where cycle.isRolling {
            let offset = cycle.frame - 16 * 48_000
            guard offset + cycle.count <= min(reference.count, 48_000) else { break }
            for frame in 0..<cycle.count {
                worst = max(worst, abs(left[cycle.index + frame] - reference[offset + frame]))
            }
            compared += cycle.count
        }
        problems.need(compared >= 40_000, "\(compared) frames compared")
        problems.need(worst < 1e-4, "the first second from bar 9 differs from the render by \(worst)")
        problems.need(
            left[cycles[firstRolling].index..<(cycles[firstRolling].index + 4_096)].contains { abs($0) > 1e-3 },
            "silent when rolling")
        // Stopped: the notes are released; a second later, silence.
        let quiet = cycles[(lastRolling + 1)...].filter { $0.index > cycles[lastRolling].index + 48_000 }
        problems.need(!quiet.isEmpty, "too little was recorded after the stop")
        problems.need(
            quiet.allSatisfy { cycle in left[cycle.index..<(cycle.index + cycle.count)].allSatisfy { abs($0) < 1e-4 } },
            "sound a second after the stop")
        return problems
    }

    @Test("master: starts the transport from --start, publishes bars and tempo, stops it at the song's end")
    func mastersTheTransport() throws {
        let server = try jackServer()
        try withTemporaryFolder("jack-transport") { directory in
            let song = directory + "/short.mid"
            try writeShortSong(to: song)
            let reference = try rendered(song, in: directory)
            try threeTries { try masterOnce(server: server, song: song, reference: reference) }
        }
    }

    func masterOnce(server: JACKServer, song: String, reference: [Float]) throws -> Problems {
        var problems = Problems()
        // The probe first, so that it sees the transport from its start.
        let probe = try TransportProbe(server: server.name)
        let (play, errors) = try startPlaying([song, "--transport", "master", "--start", "0.5"], server: server)
        defer { if play.isRunning { play.terminate() } }
        var connected = false
        for _ in 0..<250 where !connected {
            connected = probe.connect(["pianola:out_1", "pianola:out_2"])
            if !connected { usleep(5_000) }
        }
        try #require(connected, "pianola's ports never appeared")
        #expect(waitForExit(play, seconds: 20), "play did not end at the song's end")
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(play.terminationStatus == 0, "\(stderr)")
        usleep(300_000)

        let (cycles, left, _) = probe.recording()
        let rolling = cycles.filter(\.isRolling)
        guard let first = rolling.first, let lastRolling = rolling.last else {
            return Problems(list: ["the transport never rolled"])
        }
        problems.need(first.frame == 24_000, "the transport started at frame \(first.frame)")
        // 120 BPM in 4/4 (no tempo or meter in the file): a beat is 24 000 frames, a bar four.
        for cycle in rolling {
            guard let bbt = cycle.bbt else {
                problems.list.append("no bar grid at frame \(cycle.frame)")
                continue
            }
            problems.need(
                Int(bbt.bar) == cycle.frame / 96_000 + 1 && Int(bbt.beat) == cycle.frame / 24_000 % 4 + 1
                    && bbt.bpm == 120, "bar \(bbt.bar) beat \(bbt.beat) \(bbt.bpm) BPM at frame \(cycle.frame)")
        }
        // At the song's end (2.2 s, 105 600 frames) the transport stops; the session looks every
        // 50 ms (about 2.3 cycles), a busy machine later.
        problems.need((105_600 - 1_024...105_600 + 8_192).contains(lastRolling.frame), "rolled to \(lastRolling.frame)")
        problems.need(cycles.last?.isRolling == false, "still rolling at the end")
        // What sounded at each rolling cycle is the render at the transport's frame.
        var worst: Float = 0
        for cycle in rolling where cycle.frame + cycle.count <= reference.count {
            for frame in 0..<cycle.count {
                worst = max(worst, abs(left[cycle.index + frame] - reference[cycle.frame + frame]))
            }
        }
        problems.need(worst < 1e-4, "the played song differs from the render by \(worst)")
        problems.need(
            rolling.contains { cycle in left[cycle.index..<(cycle.index + cycle.count)].contains { abs($0) > 1e-3 } },
            "silent")
        return problems
    }

    @Test("--transport without JACK, with several files, --loop or --speed: one line each")
    func refusals() throws {
        try withTemporaryFolder("jack-transport") { directory in
            let song = directory + "/short.mid"
            try writeShortSong(to: song)
            let cases: [([String], String)] = [
                ([song, "--transport", "follow"], "add --driver jack"),
                ([song, song, "--transport", "follow", "--driver", "jack"], "plays one file"),
                ([song, "--transport", "master", "--driver", "jack", "--loop"], "leave out --loop and --speed"),
                (
                    [song, "--transport", "follow", "--driver", "jack", "--start", "3"],
                    "use --transport master --start"
                ),
                ([song, "--transport", "sideways", "--driver", "jack"], "--transport"),
            ]
            for (arguments, words) in cases {
                let result = try runPianola(["play"] + arguments)
                #expect(result.status != 0)
                let lines = result.stderr.split(separator: "\n").filter {
                    $0.hasPrefix("Error:") || $0.hasPrefix("pianola:")
                }
                #expect(lines.count == 1 && lines[0].contains(words), "\(arguments): \(result.stderr)")
            }
        }
    }
}
