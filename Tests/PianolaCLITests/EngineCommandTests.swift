import Foundation
import Pianola
import TestSupport
import Testing

/// `--engine native`: Pianola's own voice engine behind `render` (lanes, stems, batches,
/// manifests) and `play`, against FluidSynth's renders of the same song.
@Suite("pianola --engine native|fluidsynth", .serialized)
struct EngineCommandTests {
    static let debianSF3 = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"
    static var fonts: [String] {
        [bundledFontPath] + [debianSF3].filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// One channel (0 or 1) of an interleaved stereo buffer.
    static func side(_ buffer: AudioFile.Buffer, _ channel: Int) -> [Float] {
        stride(from: channel, to: buffer.samples.count, by: buffer.channelCount).map { buffer.samples[$0] }
    }

    /// RMS level in decibels of 50 ms windows (at 44.1 kHz).
    static func envelope(_ signal: [Float], window: Int = 2_205) -> [Double] {
        stride(from: 0, to: signal.count - window + 1, by: window).map { start in
            let power = signal[start..<(start + window)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
            return 10 * log10(max(power, 1e-12))
        }
    }

    /// Pearson correlation of two series over their common length.
    static func pearson(_ a: [Double], _ b: [Double]) -> Double {
        let count = min(a.count, b.count)
        let (x, y) = (Array(a.prefix(count)), Array(b.prefix(count)))
        let (mx, my) = (x.reduce(0, +) / Double(count), y.reduce(0, +) / Double(count))
        var (sxy, sxx, syy) = (0.0, 0.0, 0.0)
        for index in 0..<count {
            sxy += (x[index] - mx) * (y[index] - my)
            sxx += (x[index] - mx) * (x[index] - mx)
            syy += (y[index] - my) * (y[index] - my)
        }
        return sxy / (sxx * syy).squareRoot()
    }

    /// Renders the demo song to a float WAV at `path` with `arguments`, and reads it.
    static func render(_ path: String, font: String = bundledFontPath, _ arguments: [String]) throws -> AudioFile.Buffer
    {
        let result = try runPianola(["render", "-q", demoSong, "-o", path, "-s", font, "--format", "f32"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try AudioFile.read(from: path)
    }

    /// The largest difference between two renders' samples, and whether their lengths match.
    static func difference(_ a: AudioFile.Buffer, _ b: AudioFile.Buffer) -> (largest: Float, sameLength: Bool) {
        let largest = zip(a.samples, b.samples).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        return (largest, a.samples.count == b.samples.count)
    }

    @Test(
        "native renders the demo song as FluidSynth does (dry): level within 1 dB, 50 ms envelope ≥ 0.99",
        arguments: fonts)
    func nativeMatchesFluidSynth(font: String) throws {
        try withTemporaryFolder("engine") { folder in
            let reference = try Self.render(
                folder + "/fluidsynth.wav", font: font, ["--synth-reverb", "off", "--synth-chorus", "off"])
            let native = try Self.render(
                folder + "/native.wav", font: font,
                ["--engine", "native", "--synth-reverb", "off", "--synth-chorus", "off"])
            // The automatic tail ends where FluidSynth's does (the voices ended, the output quiet):
            // 1 s with the bundled font, 7 s with FluidR3Mono's long releases.
            let tails = (Double(native.frameCount) / 44_100, Double(reference.frameCount) / 44_100)
            #expect(tails.0 > 15.6 && abs(tails.0 - tails.1) < 0.1, "native \(tails.0) s, FluidSynth \(tails.1) s")
            let music = 44_100 * 15
            for channel in 0..<2 {
                let theirs = Array(Self.side(reference, channel).prefix(music))
                let ours = Array(Self.side(native, channel).prefix(music))
                let shape = Self.pearson(Self.envelope(ours), Self.envelope(theirs))
                #expect(shape >= 0.99, "\(font), channel \(channel): envelope correlation \(shape)")
                let level = rmsDecibels(ours) - rmsDecibels(theirs)
                #expect(abs(level) < 1, "\(font), channel \(channel): level differs by \(level) dB")
            }
        }
    }

    @Test("--interpolation does not change a native render; --synth-reverb and --synth-chorus switch its own")
    func fluidSynthSettings() throws {
        try withTemporaryFolder("engine") { folder in
            let plain = try Self.render(folder + "/plain.wav", ["--engine", "native"])
            let seventh = try Self.render(folder + "/seventh.wav", ["--engine", "native", "--interpolation", "7th"])
            #expect(Self.difference(plain, seventh) == (0, true))
            let dry = try Self.render(
                folder + "/dry.wav", ["--engine", "native", "--synth-reverb", "off", "--synth-chorus", "off"])
            #expect(Self.difference(plain, dry).largest > 1e-3, "reverb and chorus on by default, as FluidSynth's")
        }
    }

    @Test("native with --threads 2 (two lanes summed) is native with --threads 1")
    func nativeLanes() throws {
        try withTemporaryFolder("engine") { folder in
            let one = try Self.render(folder + "/one.wav", ["--engine", "native", "--threads", "1"])
            let two = try Self.render(folder + "/two.wav", ["--engine", "native", "--threads", "2"])
            let (largest, sameLength) = Self.difference(one, two)
            #expect(sameLength, "\(one.frameCount) and \(two.frameCount) frames")
            #expect(largest < 1e-5, "samples differ by up to \(largest)")
            #expect(one.samples.contains { abs($0) > 0.05 })
        }
    }

    @Test("native stems by channel: five stems summing to the mix, which is the plain native render")
    func nativeStems() throws {
        try withTemporaryFolder("engine") { folder in
            let plain = try Self.render(folder + "/plain.wav", ["--engine", "native"])
            let result = try runPianola([
                "render", "-q", demoSong, "-o", folder + "/stems", "--stems", "channel", "-s", bundledFontPath,
                "--format", "f32", "--engine", "native",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let mix = try AudioFile.read(from: folder + "/stems/mix.wav")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/stems").filter {
                $0.hasPrefix("channel-") && $0.hasSuffix(".wav")
            }
            #expect(names.count == 5, "\(names)")
            var sum = [Float](repeating: 0, count: mix.samples.count)
            for name in names {
                let stem = try AudioFile.read(from: folder + "/stems/" + name)
                #expect(stem.samples.count == mix.samples.count, "\(name)")
                for index in 0..<min(stem.samples.count, sum.count) { sum[index] += stem.samples[index] }
            }
            let residual = zip(sum, mix.samples).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
            #expect(residual < 1e-5, "stems minus mix: up to \(residual)")
            let common = min(mix.samples.count, plain.samples.count)
            let fromPlain = zip(mix.samples.prefix(common), plain.samples.prefix(common)).reduce(Float(0)) {
                max($0, abs($1.0 - $1.1))
            }
            #expect(common >= 44_100 * 2 * 15 && fromPlain < 1e-5, "mix minus plain render: up to \(fromPlain)")
        }
    }

    @Test("play --engine native on a device (the ALSA file plugin) sends the native render's samples")
    func playNative() throws {
        try withTemporaryFolder("engine") { folder in
            let raw = folder + "/played.raw"
            let result = try runPianola([
                "play", demoSong, "-d", "file:FILE=\(raw),FORMAT=raw", "-s", bundledFontPath, "--period", "512",
                "--periods", "3", "--engine", "native",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let played = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let rendered = try Self.render(folder + "/rendered.wav", ["--engine", "native"]).samples
            let music = 44_100 * 15 * 2
            #expect(played.count >= music && rendered.count >= music)
            let largest = zip(played.prefix(music), rendered.prefix(music)).reduce(Float(0)) {
                max($0, abs($1.0 - $1.1))
            }
            #expect(largest < 1e-6, "played and rendered differ by up to \(largest)")
            #expect(rendered.prefix(music).contains { abs($0) > 0.05 })
        }
    }

    @Test("live --engine native on the null device runs with the native node in its graph, and refuses a font stack")
    func liveNative() throws {
        try withTemporaryFolder("engine") { folder in
            let take = folder + "/take.wav"
            let log = folder + "/live.err"
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
            process.arguments = [
                "live", "-d", "null", "-s", bundledFontPath, "--rtpmidi-connect", "127.0.0.1:9", "--record-audio", take,
                "--engine", "native",
            ]
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            func said() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            let deadline = Date().addingTimeInterval(60)
            while !said().contains("MIDI input: inviting") && process.isRunning && Date() < deadline { usleep(20_000) }
            #expect(said().contains("MIDI input: inviting"), "\(said())")
            sleep(1)
            process.terminate()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(said())")
            #expect(try AudioFile.read(from: take).frameCount > 0)
        }
        let stacked = try runPianola([
            "live", "-d", "null", "-s", bundledFontPath, "-s", bundledFontPath, "--engine", "native",
        ])
        #expect(stacked.status == 64)
        #expect(stacked.stderr.contains("--engine native plays one SoundFont"), "\(stacked.stderr)")
    }

    @Test("native --jobs 2 over a folder: each output is the song's native render")
    func nativeJobs() throws {
        try withTemporaryFolder("engine") { folder in
            let single = try Self.render(folder + "/single.wav", ["--engine", "native"])
            try FileManager.default.createDirectory(atPath: folder + "/songs", withIntermediateDirectories: true)
            for name in ["a", "b", "c"] {
                try FileManager.default.copyItem(atPath: demoSong, toPath: folder + "/songs/\(name).mid")
            }
            let result = try runPianola([
                "render", "-q", folder + "/songs", "-o", folder + "/out/", "-s", bundledFontPath, "--format", "f32",
                "--engine", "native", "--jobs", "2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            for name in ["a", "b", "c"] {
                let rendered = try AudioFile.read(from: folder + "/out/\(name).wav")
                let (largest, sameLength) = Self.difference(rendered, single)
                #expect(sameLength && largest == 0, "\(name): differs by up to \(largest)")
            }
        }
    }

    @Test("a manifest's \"engine\": \"native\" renders that job with the native engine, the others with FluidSynth")
    func manifestEngine() throws {
        try withTemporaryFolder("engine") { folder in
            let native = try Self.render(folder + "/native.wav", ["--engine", "native"])
            let fluidSynth = try Self.render(folder + "/fluidsynth.wav", [])
            let manifest = folder + "/jobs.jsonl"
            try """
            {"input": "\(demoSong)", "output": "n.wav", "engine": "native"}
            {"input": "\(demoSong)", "output": "f.wav"}

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
            let result = try runPianola([
                "render", "-q", "--manifest", manifest, "-s", bundledFontPath, "--format", "f32",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let n = try AudioFile.read(from: folder + "/n.wav")
            let f = try AudioFile.read(from: folder + "/f.wav")
            #expect(Self.difference(n, native) == (0, true))
            #expect(Self.difference(f, fluidSynth) == (0, true))
            #expect(Self.difference(n, f).largest > 0.01)

            try """
            {"input": "\(demoSong)", "output": "x.wav", "engine": "timidity"}

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
            let bad = try runPianola(["render", "-q", "--manifest", manifest, "-s", bundledFontPath])
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("engine 'timidity' is not fluidsynth or native"), "\(bad.stderr)")
        }
    }

    @Test("a bad --engine, and --engine native with what needs FluidSynth, are usage errors (exit 64, one line)")
    func refusals() throws {
        let cases: [([String], String)] = [
            (["--engine", "nativ"], "--engine must be fluidsynth or native, got 'nativ'"),
            (
                ["--engine", "native", "--timing", "fluidsynth"],
                "--timing fluidsynth needs FluidSynth's engine: not with --engine native"
            ),
            (
                ["--engine", "native", "--program", "1:4"],
                "--program needs FluidSynth's engine: not with --engine native"
            ),
            (
                ["--engine", "native", "--channel-map", "10:3-4", "--channels", "4"],
                "--channel-map needs FluidSynth's engine: not with --engine native"
            ),
            (
                ["--engine", "native", "-s", bundledFontPath],
                "--engine native plays one SoundFont: give one -s, or stack them with FluidSynth"
            ),
        ]
        for (arguments, message) in cases {
            let result = try runPianola(
                ["render", demoSong, "-o", "/nonexistent/x.wav", "-s", bundledFontPath] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
