import Foundation
import Pianola
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An ALSA configuration (the system's, plus capture devices of the test's own) for a child
/// `pianola`: `ALSA_CONFIG_PATH` lists the system's file and then this one.
private func alsaEnvironment(_ folder: String, _ definitions: [String]) throws -> [String: String] {
    let path = folder + "/asound.conf"
    try definitions.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    return ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + path]
}

/// `pianola record …` running in the background.
private func startRecording(_ arguments: [String], environment: [String: String], input: Pipe? = nil) throws -> Process
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
    process.arguments = ["record"] + arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = input ?? FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

@Suite("pianola record", .serialized)
struct RecordCommandTests {
    @Test(
        "recording ALSA's null device keeps real time, monitored on null or not: --duration 2 takes two seconds, loses nothing",
        arguments: [[], ["--monitor", "--monitor-device", "null"]])
    func recordsNullInRealTime(monitoring: [String]) throws {
        // Unpaced, two seconds of recording wrote 2:31.8 of silence, 3.4 million frames lost.
        try withTemporaryFolder("record") { folder in
            let started = Date()
            // (A buffer of a third of a second: a busy machine keeping the thread away is no overrun.)
            let result = try runPianola(
                [
                    "record", "-o", folder + "/take.wav", "-d", "null", "--duration", "2", "--period", "4096",
                    "--periods",
                    "4",
                ] + monitoring)
            let took = Date().timeIntervalSince(started)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("Recorded 0:02.0 to"), "\(result.stderr)")
            #expect(result.stderr.contains("; 0 overruns, 0 frames lost"), "\(result.stderr)")
            let recorded = try AudioFile.read(from: folder + "/take.wav")
            #expect(abs(Double(recorded.frameCount) / recorded.sampleRate - 2) < 0.05, "\(recorded.frameCount) frames")
            // The clock never runs early: two seconds of capture take two seconds at least (monitored,
            // less the output's buffer, which it fills ahead; unpaced, nothing held them back).
            #expect(took >= (monitoring.isEmpty ? 2 : 1.5), "recorded in \(took) s")
        }
    }

    @Test("records a device to a file, the same samples, with a JSON summary")
    func recordsToFile() throws {
        try withTemporaryFolder("record") { folder in
            let source = numberedFrames(44_100 * 3)
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            let environment = try alsaEnvironment(folder, [device.definitions])
            let result = try runPianola(
                [
                    "record", "-o", folder + "/take.flac", "-d", device.name, "--rate", "44100", "--format", "s24",
                    "--duration", "2", "--json",
                ], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("Input: pianola_test_capture, float32, 2 ch at 44100 Hz, 1024 × 3 frames"))
            #expect(result.stderr.contains("Recorded 0:02.0 to \(folder)/take.flac"))
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(summary["frames"] as? Int == 88_200)
            #expect(summary["files"] as? [String] == [folder + "/take.flac"])
            #expect(summary["overruns"] as? Int == 0)
            let recorded = try AudioFile.read(from: folder + "/take.flac")
            #expect(recorded.frameCount == 88_200 && recorded.samples == Array(source[0..<176_400]))
            // --file-rate: the file at another rate, converted as it is written.
            let converted = try runPianola(
                [
                    "record", "-o", folder + "/low.wav", "-d", device.name, "--rate", "44100", "--file-rate", "22050",
                    "--duration", "1", "--json",
                ], environment: environment)
            #expect(converted.status == 0, "\(converted.stderr)")
            #expect(converted.stderr.contains("s16 at 22050 Hz"), "\(converted.stderr)")
            let low = try AudioFile.read(from: folder + "/low.wav")
            #expect(low.sampleRate == 22_050 && abs(low.frameCount - 22_050) <= 2, "\(low.frameCount) frames")
        }
    }

    @Test(
        "records to .opus (48 kHz from a 44.1 kHz device) and .mp3 at --bitrate: as long and as loud as what was played"
    )
    func recordsCompressed() throws {
        try withTemporaryFolder("record") { folder in
            // Three seconds of a chord that swells and fades, on both channels.
            var source: [Float] = []
            for frame in 0..<(44_100 * 3) {
                let time = Double(frame) / 44_100
                let value = [220.0, 277.18, 329.63].reduce(0.0) { $0 + sin(2 * Double.pi * $1 * time) }
                let sample = Float(0.2 * sin(Double.pi * time / 3) * value)
                source += [sample, sample * 0.5]
            }
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            let environment = try alsaEnvironment(folder, [device.definitions])
            for (name, extra, rate) in [("take.opus", [String](), 48_000), ("take.mp3", ["--bitrate", "128"], 44_100)] {
                let result = try runPianola(
                    ["record", "-o", folder + "/" + name, "-d", device.name, "--rate", "44100", "--duration", "2"]
                        + extra, environment: environment)
                #expect(result.status == 0, "\(result.stderr)")
                let recorded = try AudioFile.read(from: folder + "/" + name)
                #expect(recorded.sampleRate == Double(rate) && recorded.channelCount == 2, "\(name)")
                // Two seconds, within the 64 frames of CompressedOutputTests' tolerance.
                #expect(abs(recorded.frameCount - 2 * rate) <= 64, "\(name): \(recorded.frameCount) frames")
                let played = Array(source[0..<(2 * 44_100 * 2)])
                #expect(abs(rmsDecibels(recorded.samples) - rmsDecibels(played)) < 0.5, "\(name)")
            }
        }
    }

    @Test("bad input: one line each, a non-zero exit, and no file created")
    func badInput() throws {
        try withTemporaryFolder("record") { folder in
            let device = try FileCaptureDevice.make(samples: [Float](repeating: 0, count: 1_000), in: folder)
            let environment = try alsaEnvironment(
                folder, [device.definitions, "pcm.playback_only { type asym playback.pcm \"null\" }"])
            let out = folder + "/take.wav"
            let cases: [([String], String)] = [
                (["-d", "hw:57"], "pianola: audio device 'hw:57': cannot open: "),
                (["-d", "playback_only"], "pianola: audio device 'playback_only': cannot open: "),
                (["-d", device.name, "--channels", "9"], "--channels must be between 1 and 8, got 9"),
                (["-d", device.name, "--rate", "4000"], "--rate must be between 8000 and 192000 Hz, got 4000"),
                (["-d", device.name, "--split", "0.5"], "--split must be at least 1 second"),
                (["-d", device.name, "--file-rate", "500"], "--file-rate must be between 8000 and 192000 Hz, got 500"),
                (["-d", device.name, "--format", "s8"], "--format must be s16, s24 or f32, got 's8'"),
                (["-d", device.name, "-o", folder + "/no/such/folder/take.wav"], "No such file or directory"),
                (
                    ["-d", device.name, "-o", folder + "/take.m4a"],
                    "use a .wav, .flac, .ogg, .opus, .mp3, .aiff or .raw extension"
                ),
            ]
            for (arguments, message) in cases {
                let result = try runPianola(
                    ["record", "-o", out, "--duration", "1"] + arguments, environment: environment)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
                #expect(
                    result.stderr.split(separator: "\n").filter { $0.hasPrefix("pianola:") || $0.hasPrefix("Error:") }
                        .count == 1, "\(arguments): \(result.stderr)")
                let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
                    !["input.raw", "asound.conf"].contains($0)
                }
                #expect(left.isEmpty, "\(arguments) left \(left)")
            }
            // An existing file: refused and kept, unless --force.
            try Data("keep".utf8).write(to: URL(fileURLWithPath: out))
            let refused = try runPianola(
                ["record", "-o", out, "-d", device.name, "--duration", "1"], environment: environment)
            #expect(refused.status == 1)
            #expect(refused.stderr == "pianola: \(out): cannot open: the file exists (use --force to replace it)\n")
            #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep")
            let forced = try runPianola(
                ["record", "-o", out, "-d", device.name, "--duration", "0.5", "--force"], environment: environment)
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try AudioFile.read(from: out).frameCount == 24_000)
            // An existing meter log: refused and kept, and no recording started.
            try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/levels.jsonl"))
            let log = try runPianola(
                ["record", "-o", folder + "/other.wav", "-d", device.name, "--meter-log", folder + "/levels.jsonl"],
                environment: environment)
            #expect(log.status == 1)
            #expect(
                log.stderr
                    == "pianola: \(folder)/levels.jsonl: cannot open: the file exists (use --force to replace it)\n")
            #expect(!FileManager.default.fileExists(atPath: folder + "/other.wav"))
        }
    }

    @Test("--interactive takes space and q from a pipe; --meter-log writes every window read as JSON")
    func keysFromPipeAndMeterLog() throws {
        try withTemporaryFolder("record") { folder in
            let feeder = PacedFeeder(
                folder: folder, samples: numberedFrames(48_000 * 30), rate: 48_000, channels: 2, speed: 1)
            let environment = try alsaEnvironment(folder, [feeder.device.definitions])
            let keys = Pipe()
            let process = try startRecording(
                [
                    "-o", folder + "/take.wav", "-d", feeder.device.name, "--format", "f32", "--period", "512",
                    "--interactive", "--meter-log", folder + "/levels.jsonl",
                ], environment: environment, input: keys)
            for key in [" ", " ", "q"] {
                sleep(1)
                keys.fileHandleForWriting.write(Data(key.utf8))
            }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            // Two unbroken runs of the input (frame numbers), the pause between them whole periods.
            let samples = try AudioFile.read(from: folder + "/take.wav").samples
            let numbers = (0..<samples.count / 2).map { frame in
                Int((samples[frame * 2] * 32_768).rounded()) + Int((samples[frame * 2 + 1] * 32_768).rounded()) * 32_768
            }
            let jumps = numbers.indices.dropFirst().filter { numbers[$0] != numbers[$0 - 1] + 1 }
            #expect(numbers.first == 0 && jumps.count == 1, "jumps at \(jumps)")
            if let jump = jumps.first {
                let paused = numbers[jump] - jump
                #expect(jump % 512 == 0 && paused % 512 == 0, "paused at \(jump) for \(paused) frames")
                #expect(paused > 24_000 && paused < 96_000, "paused for \(paused) frames")
            }
            // The log: about 20 windows a second, in order; the first ones (before the pause) measure the
            // file's own frames.
            let lines = try String(contentsOfFile: folder + "/levels.jsonl", encoding: .utf8).split(separator: "\n")
            let readings = try lines.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            let ends = readings.compactMap { $0["endFrame"] as? Int }
            #expect(ends.count == readings.count && ends.count >= 30, "\(ends.count) windows logged")
            #expect(zip(ends, ends.dropFirst()).allSatisfy { $0 < $1 } && ends.allSatisfy { $0 % 1_024 == 0 })
            let first = try #require(readings.first)
            let end = try #require(first["endFrame"] as? Int)
            let peaks = try #require(first["peak"] as? [Double])
            let rms = try #require(first["rms"] as? [Double])
            for channel in 0..<2 {
                let window = (end - 1_024..<end).map { Double(samples[$0 * 2 + channel]) }
                let expectedPeak = 20 * log10(window.map(abs).max() ?? 0)
                let expectedRMS = 20 * log10((window.map { $0 * $0 }.reduce(0, +) / 1_024).squareRoot())
                #expect(abs(peaks[channel] - max(-160, expectedPeak)) < 0.1, "channel \(channel) peak")
                #expect(abs(rms[channel] - max(-160, expectedRMS)) < 0.1, "channel \(channel) RMS")
            }
        }
    }

    @Test("--meter-log that cannot be written: said once at once and in the summary, exit 1; the recording whole")
    func meterLogWriteFails() throws {
        try withTemporaryFolder("record") { folder in
            let device = try FileCaptureDevice.make(samples: numberedFrames(48_000 * 2), in: folder)
            let environment = try alsaEnvironment(folder, [device.definitions])
            // /dev/full: every write fails with ENOSPC, as on a full disk.
            let result = try runPianola(
                [
                    "record", "-o", folder + "/take.wav", "-d", device.name, "--duration", "1", "--meter-log",
                    "/dev/full",
                    "--force", "--json",
                ], environment: environment)
            #expect(result.status == 1, "\(result.stderr)")
            let said = "pianola: meter log /dev/full: cannot write: No space left on device; no more windows are logged"
            #expect(result.stderr.components(separatedBy: said).count == 2, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "note: the meter log /dev/full stopped after 0 windows: cannot write: No space left on device"),
                "\(result.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let log = try #require(summary["meterLog"] as? [String: Any], "\(result.stdout)")
            #expect((log["failure"] as? String)?.contains("No space left on device") == true)
            #expect(try AudioFile.read(from: folder + "/take.wav").frameCount == 48_000)
        }
    }

    @Test("SIGTERM and SIGINT complete the file (exit 0 and 130); SIGKILL leaves all but the last second")
    func signals() throws {
        for signal in [SIGTERM, SIGINT, SIGKILL] {
            try withTemporaryFolder("record") { folder in
                let feeder = PacedFeeder(
                    folder: folder, samples: numberedFrames(48_000 * 30), rate: 48_000, channels: 2, speed: 1)
                let environment = try alsaEnvironment(folder, [feeder.device.definitions])
                let out = folder + "/take.wav"
                let process = try startRecording(
                    ["-o", out, "-d", feeder.device.name, "--format", "f32", "--period", "512"],
                    environment: environment)
                sleep(3)
                kill(process.processIdentifier, signal)
                let killedAt = Date()
                process.waitUntilExit()
                let expectedStatus: Int32 = signal == SIGINT ? 130 : signal == SIGTERM ? 0 : SIGKILL
                #expect(process.terminationStatus == expectedStatus, "signal \(signal)")
                let recorded = try AudioFile.read(from: out)
                let seconds = Double(recorded.frameCount) / 48_000
                // The feeder started with the recorder; about 3 s were captured when the signal came.
                #expect(
                    seconds > (signal == SIGKILL ? 1.4 : 2.4) && seconds < 3.5 + Date().timeIntervalSince(killedAt),
                    "signal \(signal): \(seconds) s")
                let parts = frameNumbersAreOneRun(recorded.samples)
                #expect(parts, "signal \(signal): the file is one unbroken run of the input")
            }
        }
    }

    @Test("the RecordWithMeter example records input → EQ → file and prints the meters")
    func recordWithMeterExample() throws {
        try withTemporaryFolder("record") { folder in
            // A 1 kHz tone at -6 dBFS with a DC offset of 0.2, which the example's 80 Hz high-pass removes.
            let source = (0..<48_000 * 3).flatMap { frame -> [Float] in
                let value = Float(0.5 * sin(2 * Double.pi * 1_000 * Double(frame) / 48_000)) + 0.2
                return [value, value]
            }
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/record-with-meter")
            process.arguments = [folder + "/take.wav", "--device", device.name, "--seconds", "2"]
            process.environment = ProcessInfo.processInfo.environment.merging(
                try alsaEnvironment(folder, [device.definitions])
            ) { $1 }
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(printed)")
            #expect(printed.contains("Wrote 96000 frames to \(folder)/take.wav"), "\(printed)")
            let recorded = try AudioFile.read(from: folder + "/take.wav")
            #expect(recorded.frameCount == 96_000 && recorded.channelCount == 2)
            // After the high-pass has settled: no DC left, the tone near -6 dBFS peak (plus the 3 kHz lift's tail).
            let settled = stride(from: 48_000, to: 96_000, by: 1).map { recorded.samples[$0 * 2] }
            let mean = settled.reduce(0, +) / Float(settled.count)
            #expect(abs(mean) < 0.01, "DC left: \(mean)")
            let peak = settled.map(abs).max() ?? 0
            #expect(peak > 0.45 && peak < 0.6, "peak \(peak)")
            // Without a device it fails with one line.
            #expect(try runExample("record-with-meter", [folder + "/other.wav", "--device", "hw:57"]) == 1)
            #expect(!FileManager.default.fileExists(atPath: folder + "/other.wav"))
        }
    }

    @Test("--split writes numbered files that join into the whole recording")
    func split() throws {
        try withTemporaryFolder("record") { folder in
            let source = numberedFrames(8_000 * 5)
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            let environment = try alsaEnvironment(folder, [device.definitions])
            let result = try runPianola(
                [
                    "record", "-o", folder + "/set.wav", "-d", device.name, "--rate", "8000", "--duration", "3.5",
                    "--split", "1", "--format", "f32",
                ], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("set") }
                .sorted()
            #expect(names == ["set-001.wav", "set-002.wav", "set-003.wav", "set-004.wav"])
            let joined = try names.flatMap { try AudioFile.read(from: folder + "/" + $0).samples }
            #expect(joined == Array(source[0..<56_000]))
        }
    }
}

/// Whether the frames are one unbroken run of `numberedFrames`, from the first.
private func frameNumbersAreOneRun(_ samples: [Float]) -> Bool {
    for frame in 0..<samples.count / 2 {
        let number =
            Int((samples[frame * 2] * 32_768).rounded()) + Int((samples[frame * 2 + 1] * 32_768).rounded()) * 32_768
        if number != frame { return false }
    }
    return true
}
