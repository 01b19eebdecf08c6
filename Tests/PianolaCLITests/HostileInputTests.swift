import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `pianola` process started with `arguments`, its standard error read to the end on a thread.
private final class RunningPianola {
    let process = Process()
    private let errors = Collected()
    private let reader: Thread

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardError = pipe
        let handle = pipe.fileHandleForReading
        let errors = self.errors
        reader = Thread { errors.data.withLock { $0 = handle.readDataToEndOfFile() } }
        try process.run()
        reader.start()
    }

    /// Waits for the end, at most `seconds` (then kills it: a test that would hang fails instead).
    func finish(within seconds: Double = 60) -> (status: Int32, stderr: String, timedOut: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        while !reader.isFinished { usleep(1_000) }
        return (process.terminationStatus, String(decoding: errors.data.withLock { $0 }, as: UTF8.self), timedOut)
    }
}

/// Bytes one thread collects for another.
private final class Collected: Sendable {
    let data = Mutex(Data())
}

@Suite("Hostile input: bounded reads, interruptible waits, every signal leaves nothing half-written")
struct HostileInputTests {
    @Test("/dev/zero is refused from its first bytes, by render and by info")
    func endlessDevice() throws {
        try withTemporaryFolder("hostile") { folder in
            for arguments in [
                ["render", "/dev/zero", "-o", folder + "/zero.wav", "-s", bundledFontPath], ["info", "/dev/zero"],
            ] {
                let result = try RunningPianola(arguments).finish(within: 30)
                #expect(!result.timedOut, "\(arguments[0]) /dev/zero did not end")
                #expect(result.status == 1)
                #expect(
                    result.stderr.contains("pianola: /dev/zero: not a MIDI file: no MThd header"), "\(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder + "/zero.wav"))
        }
    }

    @Test("a MIDI file over --max-midi-size is refused, naming the limit and the option; raised, it reads")
    func sizeLimit() throws {
        try withTemporaryFolder("hostile") { folder in
            let path = folder + "/padded.mid"
            let song: [UInt8] =
                oneNoteSong()
            try Data(song + [UInt8](repeating: 0, count: 2_500_000)).write(to: URL(fileURLWithPath: path))
            let refused = try runPianola(["info", path, "--max-midi-size", "2"])
            #expect(refused.status == 1)
            #expect(
                refused.stderr
                    == "pianola: \(path): cannot read \(path): 3 MB, over the limit of 2 MB for a MIDI file "
                    + "(raise it with --max-midi-size MB)\n", "\(refused.stderr)")
            let render = try runPianola(["render", path, "-o", folder + "/padded.wav", "--max-midi-size", "2", "-q"])
            #expect(render.status == 1 && render.stderr.contains("over the limit of 2 MB"), "\(render.stderr)")
            #expect(try runPianola(["info", path, "--max-midi-size", "3"]).status == 0)
        }
    }

    @Test("a render waiting on a named pipe ends on SIGTERM, SIGINT and SIGHUP, writing nothing")
    func waitingOnAPipe() throws {
        try withTemporaryFolder("hostile") { folder in
            let fifo = folder + "/song.mid"
            #expect(mkfifo(fifo, 0o600) == 0)
            for (signal, status) in [(SIGTERM, Int32(143)), (SIGINT, 130), (SIGHUP, 129)] {
                let running = try RunningPianola(["render", fifo, "-o", folder + "/out.wav", "-s", bundledFontPath])
                usleep(500_000)
                kill(running.process.processIdentifier, signal)
                let result = running.finish(within: 20)
                #expect(!result.timedOut, "signal \(signal) did not end the wait")
                #expect(result.status == status, "signal \(signal): \(result.stderr)")
                #expect(result.stderr.contains("interrupted"), "\(result.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["song.mid"])
        }
    }

    @Test("SIGHUP during a render: exit 129, no output and no partial file left")
    func hangUpWhileRendering() throws {
        try withTemporaryFolder("hostile") { folder in
            // Long enough to be caught mid-render: four minutes of a held chord at 96 kHz, reverbs after it.
            let song: [UInt8] =
                smallSong([0, 0x90, 60, 100, 0, 0x90, 64, 100, 0, 0x90, 67, 100, 0x83, 0x87, 0x40, 0x80, 60, 0])
            try Data(song).write(to: URL(fileURLWithPath: folder + "/long.mid"))
            let running = try RunningPianola(
                [
                    "render", folder + "/long.mid", "-o", folder + "/long.wav", "-s", bundledFontPath, "-r", "96000",
                    "--fx", "reverb", "--fx", "reverb",
                ])
            // Until the render has started (its temporary file exists), then hang up.
            var started = false
            for _ in 0..<500 where !started {
                usleep(20_000)
                started = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.count ?? 0 > 1
            }
            kill(running.process.processIdentifier, SIGHUP)
            let result = running.finish()
            #expect(started, "the render never started: \(result.stderr)")
            #expect(result.status == 129, "\(result.stderr)")
            #expect(result.stderr.contains("interrupted; \(folder)/long.wav was not written"), "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["long.mid"])
        }
    }

    @Test("render takes 10 000 names, options among them: every one reported, in order, the options applied")
    func tenThousandNames() throws {
        try withTemporaryFolder("hostile") { folder in
            let missing = (0..<10_000).map { "/no/such/\($0).mid" }
            let result = try runPianola(
                ["render"] + missing.prefix(5_000) + ["-o", folder, "--transpose", "-2", "--json"]
                    + missing.dropFirst(5_000)
                    + ["-s", bundledFontPath])
            #expect(result.status == 1)
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 10_000, "\(result.stderr.prefix(300))")
            #expect(lines.first?.contains(#""input":"/no/such/0.mid""#) == true)
            #expect(lines.last?.contains(#""input":"/no/such/9999.mid""#) == true)
            #expect(lines.allSatisfy { $0.contains(#""status":"failed""#) })
        }
    }

    @Test("an output that is an input is never written; an existing output is replaced only with --force")
    func outputsThatExist() throws {
        try withTemporaryFolder("hostile") { folder in
            let song: [UInt8] =
                oneNoteSong(ticks: 24)
            let files = FileManager.default
            func bytes(_ path: String) -> Data? { files.contents(atPath: path) }
            // A MIDI file named like audio, rendered onto itself, or through a link to it.
            let named = folder + "/self.wav"
            try Data(song).write(to: URL(fileURLWithPath: named))
            try files.createSymbolicLink(atPath: folder + "/link.wav", withDestinationPath: named)
            for (output, reason) in [
                (named, "\(named) is an input: not written over"),
                (folder + "/link.wav", "\(folder)/link.wav is the input \(named) under another name: not written over"),
            ] {
                for force in [false, true] {
                    let result = try runPianola(
                        ["render", named, "-o", output, "-s", bundledFontPath, "-q"] + (force ? ["--force"] : []))
                    #expect(result.status == 1)
                    #expect(result.stderr == "pianola: \(named): \(reason)\n", "\(result.stderr)")
                    #expect(bytes(named) == Data(song))
                }
            }
            // The SoundFont is an input too.
            let font = folder + "/font.wav"
            try files.copyItem(atPath: bundledFontPath, toPath: font)
            let onFont = try runPianola(["render", named, "-o", font, "-s", font, "-q", "--force"])
            #expect(onFont.status == 1 && onFont.stderr.contains("under another name") == false, "\(onFont.stderr)")
            #expect(onFont.stderr.contains("\(font) is an input"), "\(onFont.stderr)")
            // An existing file, and a named pipe, are left as they are; --force replaces the file.
            let existing = folder + "/out.wav"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
            let pipe = folder + "/pipe.wav"
            #expect(mkfifo(pipe, 0o600) == 0)
            for output in [existing, pipe] {
                let refused = try runPianola(["render", named, "-o", output, "-s", bundledFontPath, "-q"])
                #expect(refused.status == 1)
                #expect(
                    refused.stderr
                        == "pianola: \(named): \(output) exists and was not replaced (--force replaces it)\n",
                    "\(refused.stderr)")
            }
            #expect(bytes(existing) == Data("keep me".utf8))
            var info = stat()
            #expect(stat(pipe, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
            #expect(
                try runPianola(["render", named, "-o", existing, "-s", bundledFontPath, "-q", "--force"]).status == 0)
            #expect(bytes(existing)?.prefix(4) == Data("RIFF".utf8))
            // In a batch: the job whose output exists fails, the others render.
            let batch = folder + "/batch"
            try files.createDirectory(atPath: batch, withIntermediateDirectories: true)
            for name in ["a", "b"] { try Data(song).write(to: URL(fileURLWithPath: "\(folder)/\(name).mid")) }
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: batch + "/a.wav"))
            let mixed = try runPianola(
                ["render", folder + "/a.mid", folder + "/b.mid", "-o", batch, "-s", bundledFontPath, "-q"])
            #expect(mixed.status == 1)
            #expect(mixed.stderr.contains("\(batch)/a.wav exists and was not replaced"), "\(mixed.stderr)")
            #expect(bytes(batch + "/a.wav") == Data("keep me".utf8))
            #expect(bytes(batch + "/b.wav")?.prefix(4) == Data("RIFF".utf8))
            // process: the same rules.
            let onItself = try runPianola(["process", existing, "-o", existing, "--force"])
            #expect(
                onItself.status == 1 && onItself.stderr.contains("is an input: not written over"), "\(onItself.stderr)")
            let copy = folder + "/copy.wav"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))
            let over = try runPianola(["process", existing, "-o", copy, "-q"])
            #expect(over.status == 1 && over.stderr.contains("exists and was not replaced"), "\(over.stderr)")
            #expect(try runPianola(["process", existing, "-o", copy, "-q", "--force"]).status == 0)
        }
    }

    @Test("nothing to play is refused, not rendered as silence: a file without notes, a start past the end")
    func nothingToPlay() throws {
        try withTemporaryFolder("hostile") { folder in
            let stub = folder + "/stub.mid"
            try Data(Array("MThd".utf8) + [0, 0]).write(to: URL(fileURLWithPath: stub))
            let song = folder + "/song.mid"
            try Data(oneNoteSong()).write(to: URL(fileURLWithPath: song))
            let empty = try runPianola(["render", stub, "-o", folder + "/stub.wav", "-s", bundledFontPath, "-q"])
            #expect(empty.status == 1)
            #expect(empty.stderr == "pianola: \(stub): the file holds no notes: nothing to render\n", "\(empty.stderr)")
            let late = try runPianola(
                ["render", song, "-o", folder + "/late.wav", "-s", bundledFontPath, "-q", "--start", "99:00"])
            #expect(late.status == 1)
            #expect(
                late.stderr == "pianola: \(song): the start (0:99:00) is at or past the end of the music (0:00:01)\n"
                    || late.stderr.contains("is at or past the end of the music"), "\(late.stderr)")
            // In a batch: counted as failed, the others rendered.
            let batch = try runPianola(["render", stub, song, "-o", folder + "/out", "-s", bundledFontPath, "--json"])
            #expect(batch.status == 1)
            #expect(batch.stdout.contains(#""status":"failed""#) && batch.stdout.contains(#""status":"rendered""#))
            let written = try FileManager.default.contentsOfDirectory(atPath: folder + "/out").filter {
                $0.hasSuffix(".wav")
            }
            #expect(written == ["song.wav"])
            #expect(!FileManager.default.fileExists(atPath: folder + "/stub.wav"))
            #expect(!FileManager.default.fileExists(atPath: folder + "/late.wav"))
        }
    }
}
