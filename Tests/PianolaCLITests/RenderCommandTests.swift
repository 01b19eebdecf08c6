import AudioFiles
import Foundation
import SMF
import TestSupport
import Testing

let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
let bundledFontPath = checkout + "/SoundFonts/PianolaGM.sf2"
let demoSong = checkout + "/Examples/demo-song.mid"

/// Reads a 16-bit stereo WAV written by libsndfile (44-byte header): frames and peak.
func wavStats(_ path: String) throws -> (frames: Int, rate: Int, peak: Double) {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let rate = Int(data[24]) | Int(data[25]) << 8 | Int(data[26]) << 16
    var peak = 0.0
    let samples = data.dropFirst(44)
    var index = samples.startIndex
    while index + 1 < samples.endIndex {
        let value = Int16(bitPattern: UInt16(samples[index]) | UInt16(samples[index + 1]) << 8)
        peak = max(peak, abs(Double(value)) / 32_768)
        index += 2
    }
    return ((data.count - 44) / 4, rate, peak)
}

/// Runs one of the built example programs and returns its exit status.
func runExample(_ name: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/" + name)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

@Suite("pianola render and the examples", .serialized)
struct RenderCommandTests {
    @Test("the demo song is made by its generator, byte for byte")
    func demoSongIsGenerated() throws {
        try withTemporaryFolder("render") { directory in
            let status = try runExample("make-demo-song", [directory + "/song.mid"])
            #expect(status == 0)
            #expect(
                FileManager.default.contents(atPath: directory + "/song.mid")
                    == FileManager.default.contents(atPath: demoSong))
        }
    }

    @Test("renders a MIDI file to WAV with the bundled font: right rate, length and level; says which font")
    func rendersWAV() throws {
        try withTemporaryFolder("render") { folder in
            let output = folder + "/demo.wav"
            let result = try runPianola([
                "render", demoSong, "-o", output, "--soundfont", bundledFontPath, "--rate", "48000",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("SoundFont: \(bundledFontPath)"))
            let stats = try wavStats(output)
            #expect(stats.rate == 48_000)
            // 15.6 s of music plus a short tail.
            #expect(Double(stats.frames) / 48_000 > 15.5 && Double(stats.frames) / 48_000 < 20)
            #expect(stats.peak > 0.05 && stats.peak < 1)
            let names = try FileManager.default.contentsOfDirectory(
                atPath: (output as NSString).deletingLastPathComponent)
            #expect(!names.contains { $0.contains("partial") })
        }
    }

    @Test("FLAC and Ogg by extension; several inputs into a folder")
    func formatsAndFolders() throws {
        try withTemporaryFolder("render") { directory in
            for name in ["demo.flac", "demo.ogg"] {
                let result = try runPianola([
                    "render", "-q", demoSong, "-o", directory + "/" + name, "-s", bundledFontPath, "--tail", "0.5",
                ])
                #expect(result.status == 0, "\(result.stderr)")
                let size =
                    (try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0
                #expect(size > 10_000)
            }
            let result = try runPianola([
                "render", "-q", demoSong, demoSong, "-o", directory + "/out", "--ext", "flac", "-s", bundledFontPath,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let rendered = try FileManager.default.contentsOfDirectory(atPath: directory + "/out")
            #expect(Set(rendered) == ["demo-song.flac", "demo-song-2.flac"])
        }
    }

    @Test("--jobs renders several files at once, with the same samples as one at a time; --threads renders too")
    func jobsAndThreads() throws {
        try withTemporaryFolder("render") { directory in
            var result = try runPianola([
                "render", "-q", "--jobs", "2", demoSong, demoSong, demoSong, "-o", directory + "/parallel", "-s",
                bundledFontPath,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            result = try runPianola(["render", "-q", demoSong, "-o", directory + "/serial.wav", "-s", bundledFontPath])
            #expect(result.status == 0)
            let serial = FileManager.default.contents(atPath: directory + "/serial.wav")
            for name in ["demo-song.wav", "demo-song-2.wav", "demo-song-3.wav"] {
                #expect(FileManager.default.contents(atPath: directory + "/parallel/" + name) == serial, "\(name)")
            }
            result = try runPianola([
                "render", "-q", "--threads", "2", demoSong, "-o", directory + "/threads.wav", "-s", bundledFontPath,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try wavStats(directory + "/threads.wav").peak > 0.05)
        }
    }

    @Test(
        "--jobs 4 holds one copy of the SoundFont: peak memory grows by far less than a font's worth over --jobs 1, whole or on demand"
    )
    func jobsShareTheSoundFont() throws {
        let font = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"
        guard FileManager.default.fileExists(atPath: font) else {
            print("skipped: \(font) is not installed (scripts/install-deps --test installs it)")
            return
        }
        try withTemporaryFolder("render") { directory in
            // Peak resident memory of a render, measured by a Python parent (ru_maxrss of its child).
            func peakMegabytes(jobs: Int, load: String) throws -> Double {
                let command =
                    [
                        pianolaBinaryDirectory() + "/pianola", "render", "-q", "--force", "--load", load, "--jobs",
                        "\(jobs)",
                    ]
                    + [String](repeating: demoSong, count: 4) + ["-o", directory + "/jobs\(jobs)", "-s", font]
                let script = """
                    import resource, subprocess, sys
                    subprocess.run(sys.argv[1:], check=True)
                    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
                    """
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", "-c", script] + command
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                return Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                    ?? 0
            }
            let one = try peakMegabytes(jobs: 1, load: "all")
            let four = try peakMegabytes(jobs: 4, load: "all")
            // The font alone takes over 100 MB once loaded (its samples decoded); four copies would add 300.
            #expect(one > 100, "one job: \(one) MB")
            #expect(four < one + 40, "four jobs: \(four) MB, one job: \(one) MB")
            // On demand, four renders of one song read its samples once (FluidSynth's sample cache),
            // each job adding only its synthesizer and its own copy of the font's presets (measured
            // about 17 MB a job: FluidSynth's bookkeeping of loaded samples cannot be shared between
            // threads), where a copy of the song's samples would add more.
            let oneSong = try peakMegabytes(jobs: 1, load: "song")
            let fourSongs = try peakMegabytes(jobs: 4, load: "song")
            #expect(oneSong < one - 20, "one job on demand: \(oneSong) MB, whole: \(one) MB")
            #expect(fourSongs < oneSong + 60, "four jobs on demand: \(fourSongs) MB, one job: \(oneSong) MB")
        }
    }

    @Test("bad input is one clear line and a non-zero exit; nothing is written")
    func badInput() throws {
        try withTemporaryFolder("render") { directory in
            let notMIDI = directory + "/notes.mid"
            try "hello".write(toFile: notMIDI, atomically: false, encoding: .utf8)
            var result = try runPianola(["render", notMIDI, "-o", directory + "/x.wav", "-s", bundledFontPath])
            #expect(result.status == 1)
            #expect(result.stderr.hasSuffix("pianola: \(notMIDI): not a MIDI file: a text file\n"))
            result = try runPianola(["render", demoSong, "-o", directory + "/x.wav", "-s", "/missing.sf2"])
            #expect(result.status == 1)
            #expect(result.stderr == "pianola: SoundFont not found: /missing.sf2\n")
            result = try runPianola(["render", demoSong, "-o", "/nonexistent-dir/x.wav", "-s", bundledFontPath])
            #expect(result.status == 1)
            #expect(result.stderr.contains("/nonexistent-dir/x.wav"))
            result = try runPianola(["render", demoSong, "-o", directory + "/x.m4a", "-s", bundledFontPath])
            #expect(result.status == 1)
            #expect(result.stderr.contains("use a .wav, .flac, .ogg, .opus, .mp3, .aiff or .raw extension"))
            result = try runPianola(["render", demoSong, "-o", directory + "/x.wav", "--rate", "1000"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("--rate must be between 8000 and 192000"))
            #expect(!FileManager.default.fileExists(atPath: directory + "/x.wav"))
        }
    }

    @Test("an interrupted render (SIGINT, SIGTERM) leaves no file, not even a partial one, and exits 128 + signal")
    func interruptedRender() throws {
        for signal in [SIGINT, SIGTERM] {
            try withTemporaryFolder("render") { directory in
                // A long song: the demo song looped many times through a long tail keeps it busy.
                let process = Process()
                process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
                process.arguments = [
                    "render", demoSong, demoSong, demoSong, demoSong, "-o", directory, "-s", bundledFontPath, "--tail",
                    "600", "--rate", "192000",
                ]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                // Interrupt once the render is under way (its temporary file exists), however slow
                // the machine is to start the process.
                for _ in 0..<200 {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                    if names.contains(where: { $0.contains("partial") }) { break }
                    usleep(50_000)
                }
                kill(process.processIdentifier, signal)
                process.waitUntilExit()
                #expect(process.terminationStatus == 128 + signal, "signal \(signal)")  // 130, 143
                let left = try FileManager.default.contentsOfDirectory(atPath: directory)
                #expect(left == [], "signal \(signal)")
            }
        }
    }

    @Test("-o - writes the finished render to standard output (WAV by default, FLAC or raw by --ext)")
    func renderToStandardOutput() throws {
        try withTemporaryFolder("render") { directory in
            let common = [demoSong, "-s", bundledFontPath, "--tail", "0.5"]
            #expect(try runPianola(["render"] + common + ["-o", directory + "/file.wav"]).status == 0)
            /// Runs the render with standard output into `name`, returns its standard error.
            func stream(_ extra: [String], into name: String) throws -> (Int32, String) {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
                process.arguments = ["render"] + common + ["-o", "-"] + extra
                _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: nil)
                let output = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/" + name))
                let errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                try process.run()
                let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                try output.close()
                return (process.terminationStatus, text)
            }
            let (status, messages) = try stream([], into: "streamed.wav")
            #expect(status == 0, "\(messages)")
            #expect(messages.contains("standard output:"), "the summary names it, on standard error: \(messages)")
            let file = try Data(contentsOf: URL(fileURLWithPath: directory + "/file.wav"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/streamed.wav")) == file)
            #expect(try stream(["--ext", "raw"], into: "streamed.raw").0 == 0)
            let raw = try Data(contentsOf: URL(fileURLWithPath: directory + "/streamed.raw"))
            #expect(raw.count > 44_100 * 4 && file.suffix(raw.count) == raw, "raw is the WAV's samples, headerless")
            #expect(try stream(["--ext", "flac"], into: "streamed.flac").0 == 0)
            let flac = try Data(contentsOf: URL(fileURLWithPath: directory + "/streamed.flac"))
            #expect(flac.prefix(4) == Data("fLaC".utf8))
            // Nothing left in the temporary folder, and no audio on a terminal's worth of mistakes.
            let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
            #expect(!left.contains { $0.contains("-stdout.") })
            let several = try runPianola(["render", demoSong, demoSong, "-o", "-"])
            #expect(several.status == 64 && several.stderr.contains("give one input file"), "\(several.stderr)")
            let json = try runPianola(["render", demoSong, "-o", "-", "--json"])
            #expect(json.status == 64 && json.stdout.isEmpty, "\(json.stderr)")
        }
    }

    @Test(
        "a render whose length comes from damage cannot fill the disk: --max-length and the free space, checked first")
    func runawayRenderRefused() throws {
        try withTemporaryFolder("render") { directory in
            /// One note, then a note-off `seconds` later (120 BPM, 480 ticks a beat): a long silence.
            func song(lasting seconds: Double) throws -> String {
                let ticks = Int(seconds * 2 * 480)
                let file = MIDIFile(
                    format: .singleTrack,
                    tracks: [
                        MIDIFile.Track(events: [
                            MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: 60, velocity: 90))),
                            MIDIFile.Event(tick: ticks, .channel(.noteOff(channel: 0, note: 60, velocity: 0))),
                            MIDIFile.Event(tick: ticks, .meta(.endOfTrack)),
                        ])
                    ])
                let path = directory + "/long-\(Int(seconds)).mid"
                try file.write(to: path)
                return path
            }
            let threeHours = try song(lasting: 3 * 3600)
            let started = Date()
            let long = try runPianola(["render", threeHours, "-o", directory + "/long.wav", "-s", bundledFontPath])
            #expect(long.status == 1)
            #expect(
                long.stderr.contains("the music lasts 3:00:00, more than the 2:00:00 allowed (--max-length"),
                "\(long.stderr)")
            #expect(Date().timeIntervalSince(started) < 60, "refused before rendering")

            // Longer than the free space where the output goes, at 192 kHz float: refused, nothing written.
            var stats = statvfs()
            #expect(statvfs(directory, &stats) == 0)
            let free = Double(UInt64(stats.f_bavail) * UInt64(stats.f_frsize))
            let seconds = (free / (192_000 * 8) * 1.5).rounded()
            let huge = try song(lasting: seconds)
            let full = try runPianola([
                "render", huge, "-o", directory + "/huge.wav", "-s", bundledFontPath, "--rate", "192000", "--format",
                "f32",
                "--max-length", String(Int(seconds) + 100),
            ])
            #expect(full.status == 1)
            #expect(
                full.stderr.contains("huge.wav: the render needs about") && full.stderr.contains("is free there"),
                "\(full.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".wav") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test("a SoundFont FluidSynth refuses is one line naming its first error: no GLib or DLS-loader noise")
    func refusedSoundFontIsOneLine() throws {
        var font = DamagedSoundFont(contentsOf: bundledFontPath)
        font.scrambleBagIndices()
        try withTemporaryFolder("damaged-font") { fonts in
            let path = try font.write("bags.sf2", in: fonts)
            try withTemporaryFolder("render") { directory in
                let result = try runPianola(["render", demoSong, "-o", directory + "/x.wav", "-s", path])
                #expect(result.status == 1)
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 2, "the SoundFont line and the error, nothing else: \(result.stderr)")
                #expect(
                    lines.last == "pianola: \(path): FluidSynth could not load it: Preset header indices not monotonic")
                #expect(!result.stderr.contains("CRITICAL") && !result.stderr.contains("DLS"))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
            }
        }
    }

    @Test("the next render in a folder sweeps what killed renders left there, for any output, not live ones'")
    func staleTemporaryFilesSwept() throws {
        try withTemporaryFolder("render") { directory in
            // A process that has exited: its pid names no live process (it was reaped).
            let finished = Process()
            finished.executableURL = URL(fileURLWithPath: "/bin/true")
            try finished.run()
            finished.waitUntilExit()
            let dead = finished.processIdentifier
            let stale = [".other song.wav.partial-\(dead)", ".other.flac.unnormalized-\(dead).wav"]
            let alive = ".running.wav.partial-\(getpid())"  // this test process: a render in flight
            for name in stale + [alive, ".hidden-notes.txt"] {
                #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data([1, 2, 3])))
            }
            let result = try runPianola(["render", demoSong, "-o", directory + "/demo.wav", "-s", bundledFontPath])
            #expect(result.status == 0, "\(result.stderr)")
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
            #expect(left == [alive, ".hidden-notes.txt", "demo.wav"], "\(left.sorted())")
        }
    }

    @Test("the PlayMIDIFile example plays the demo song on an ALSA device (the file plugin here)")
    func playMIDIFileExample() throws {
        try withTemporaryFolder("render") { folder in
            let raw = folder + "/played.raw"
            let status = try runExample("play-midi-file", [demoSong, "file:FILE=\(raw),FORMAT=raw", bundledFontPath])
            #expect(status == 0)
            let bytes = (try? FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int) ?? 0
            #expect(bytes >= 44_100 * 15 * 8, "\(bytes) bytes of float stereo")
        }
    }

    @Test(
        "the ReverbPlayer example loops a 48 kHz file through a medium hall at 44.1 kHz; the hall rings between clicks and after stop"
    )
    func reverbPlayerExample() throws {
        try withTemporaryFolder("render") { directory in
            // One second at 48 kHz, mono: a click at the start, silence after.
            var click = [Float](repeating: 0, count: 48_000)
            click[0] = 0.8
            try AudioFile.write(
                AudioFile.Buffer(samples: click, channelCount: 1, sampleRate: 48_000), to: directory + "/click.wav",
                encoding: .f32)
            let raw = directory + "/played.raw"
            #expect(
                try runExample(
                    "reverb-player",
                    [directory + "/click.wav", "--device", "file:FILE=\(raw),FORMAT=raw", "--seconds", "3"]) == 0)
            let data = try Data(contentsOf: URL(fileURLWithPath: raw))
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
            // The device starts before the player does (and the file plugin is not paced: it runs
            // ahead of the wall clock): the first click marks the player's start.
            let origin = try #require(left.firstIndex { abs($0) > 0.05 })
            // (Required: the slices below would trap, ending every test, on a shorter stream.)
            try #require(left.count >= origin + 44_100 * 5, "3 s of loop and 2 s of ring-out: \(left.count) frames")
            func rms(_ from: Double, _ to: Double) -> Double {
                let slice = left[origin + Int(from * 44_100)..<origin + Int(to * 44_100)]
                return (slice.reduce(0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
            }
            // The dry click, half level, at every loop start (converted to 44.1 kHz: a band-limited click).
            for second in 0..<3 {
                // (The player may start on the device's first frame: the window then starts there.)
                let start = max(0, origin + second * 44_100 - 20)
                let peak = left[start..<origin + second * 44_100 + 20].map { abs($0) }.max()!
                #expect(peak > 0.25 && peak < 0.5, "click \(second): \(peak)")
            }
            // The hall rings between the clicks, decaying, and after stop() (at 3 s) it rings out.
            #expect(rms(0.05, 0.25) > 1e-3, "early reverb \(rms(0.05, 0.25))")
            #expect(rms(0.6, 0.95) < rms(0.05, 0.25) / 3, "decays: \(rms(0.6, 0.95)) vs \(rms(0.05, 0.25))")
            #expect(rms(2.05, 2.25) > 1e-3)
            #expect(rms(3.05, 3.25) > 1e-4, "rings after stop: \(rms(3.05, 3.25))")
            #expect(rms(4.5, 4.9) < rms(3.05, 3.25) / 10, "\(rms(4.5, 4.9)) vs \(rms(3.05, 3.25))")
            // Without a file it plays its own drum loop.
            let drums = directory + "/drums.raw"
            #expect(
                try runExample("reverb-player", ["--device", "file:FILE=\(drums),FORMAT=raw", "--seconds", "1"]) == 0)
            let drumBytes = try Data(contentsOf: URL(fileURLWithPath: drums))
            let drumSamples = drumBytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            #expect(drumSamples.count >= 44_100 * 3 * 2)
            #expect((drumSamples.map { abs($0) }.max() ?? 0) > 0.2, "the drums play")
            let loop = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-drum-loop.wav").path
            #expect(!FileManager.default.fileExists(atPath: loop), "the example leaves its generated loop behind")
            #expect(try runExample("reverb-player", [directory + "/missing.wav", "--device", "null"]) == 1)
            #expect(try runExample("reverb-player", ["--help"]) == 0)
        }
    }

    @Test("the RenderToFile example renders the demo song")
    func renderToFileExample() throws {
        try withTemporaryFolder("render") { folder in
            let output = folder + "/example.wav"
            #expect(try runExample("render-to-file", [demoSong, output, bundledFontPath]) == 0)
            let stats = try wavStats(output)
            #expect(stats.frames > 44_100 * 15)
            #expect(stats.peak > 0.05)
        }
    }
}

func pianolaBinaryDirectory() -> String {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
}
