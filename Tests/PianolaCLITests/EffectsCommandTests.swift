import Foundation
import TestSupport
import Testing

/// A mono or stereo float WAV, written by hand (so the test does not rely on the writer it tests).
func writeFloatWAV(_ samples: [Float], channels: Int, rate: Int, to path: String) throws {
    var data = Data("RIFF".utf8)
    func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
    func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
    append32(36 + samples.count * 4)
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    append32(16)
    append16(3)  // IEEE float
    append16(channels)
    append32(rate)
    append32(rate * channels * 4)
    append16(channels * 4)
    append16(32)
    data.append(contentsOf: Array("data".utf8))
    append32(samples.count * 4)
    for sample in samples { withUnsafeBytes(of: sample.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
    try data.write(to: URL(fileURLWithPath: path))
}

/// The samples of a float WAV's data chunk (interleaved).
func readFloatWAV(_ path: String) throws -> [Float] {
    let wav = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 12
    while offset + 8 <= wav.count {
        let id = String(decoding: wav[offset..<offset + 4], as: UTF8.self)
        let size =
            Int(wav[offset + 4]) | Int(wav[offset + 5]) << 8 | Int(wav[offset + 6]) << 16 | Int(wav[offset + 7]) << 24
        if id == "data" {
            return wav[(offset + 8)..<(offset + 8 + size)].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }
        offset += 8 + size + (size & 1)
    }
    return []
}

/// |H| in dB of a response at a frequency (direct DTFT).
func decibels(of response: [Float], at frequency: Double, rate: Double) -> Double {
    var (real, imaginary) = (0.0, 0.0)
    for (index, sample) in response.enumerated() {
        let phase = 2 * Double.pi * frequency * Double(index) / rate
        real += Double(sample) * cos(phase)
        imaginary -= Double(sample) * sin(phase)
    }
    return 10 * log10(real * real + imaginary * imaginary)
}

/// `pianola render` of the demo song with the bundled font into a float WAV at `path`, with
/// `extra` options; its samples (interleaved).
func renderDemoSong(into path: String, _ extra: [String]) throws -> [Float] {
    let result = try runPianola(
        ["render", "-q", "--force", demoSong, "-o", path, "-s", bundledFontPath, "--format", "f32"] + extra)
    #expect(result.status == 0, "\(result.stderr)")
    return try readFloatWAV(path)
}

@Suite("pianola fx, process and --fx", .serialized)
struct EffectsCommandTests {
    @Test("fx list prints every effect's parameters with ranges and defaults, as text and JSON")
    func fxList() throws {
        let text = try runPianola(["fx", "list"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("eq: "))
        let lines = text.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("freq frequency: 10…22050 Hz, default 1000"))
        // Long keys whole, in a column of their own.
        #expect(lines.contains("expansionThreshold expansion threshold: -120…0 dB, default -60"))
        #expect(lines.contains { $0.hasPrefix("oversampling factor for the curves") })
        #expect(text.stdout.contains("limiter: "))
        let json = try runPianola(["fx", "list", "--json"])
        let effects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let filter = try #require(effects.first { $0["name"] as? String == "filter" })
        let parameters = try #require(filter["parameters"] as? [[String: Any]])
        let type = try #require(parameters.first { $0["key"] as? String == "type" })
        #expect((type["choices"] as? [String])?.contains("resonantHighShelf") == true)
    }

    @Test("process applies the chain: an impulse through --fx eq comes out as the band's response")
    func processImpulse() throws {
        try withTemporaryFolder("effects") { directory in
            var impulse = [Float](repeating: 0, count: 16_384)
            impulse[0] = 1
            try writeFloatWAV(impulse, channels: 1, rate: 48_000, to: directory + "/impulse.wav")
            let result = try runPianola([
                "process", directory + "/impulse.wav", "-o", directory + "/out.wav", "--format", "f32", "-q",
                "--fx", "eq:type=parametric,freq=1000,gain=6,bw=1", "--fx", "eq:type=highShelf,freq=8000,gain=-6",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let response = try readFloatWAV(directory + "/out.wav")
            #expect(response.count == impulse.count)
            // +6 dB at 1 kHz (the shelf adds about nothing there), −6 dB far above 8 kHz.
            #expect(abs(decibels(of: response, at: 1_000, rate: 48_000) - 6) < 0.1)
            #expect(abs(decibels(of: response, at: 20_000, rate: 48_000) + 6) < 0.3)
            #expect(!FileManager.default.fileExists(atPath: directory + "/.out.wav.partial"))
        }
    }

    @Test("bad effects: one line naming the parameter and its range, non-zero exit, no output file")
    func badEffects() throws {
        try withTemporaryFolder("effects") { directory in
            let cases: [([String], String)] = [
                (["--fx", "eq:freq=50000"], "eq: freq=50000 is out of range 10…22050 Hz"),
                (["--fx", "eq:type=wobble"], "eq: type=wobble is not one of parametric, lowPass"),
                (["--fx", "eq:gain"], "eq: 'gain' is not key=value"),
                (["--fx", "chorus"], "unknown effect 'chorus' (known: eq, filter, reverb, limiter"),
                (["--fx", "filter:q=0"], "filter: q=0 is out of range 0.19…28.8"),
                (["--fx", "filter:q=40"], "filter: q=40 is out of range 0.19…28.8"),
            ]
            for (arguments, message) in cases {
                let result = try runPianola(
                    ["render", demoSong, "-o", directory + "/x.wav", "-s", bundledFontPath] + arguments)
                #expect(result.status == 1)
                #expect(
                    result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message),
                    "\(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/x.wav"))
            let missing = try runPianola(["process", directory + "/none.wav", "-o", directory + "/y.wav"])
            #expect(missing.status == 1 && missing.stderr.contains("none.wav"))
        }
    }

    @Test(
        "render --fx: a bypassed band leaves the render bit-identical; a low-pass and a chain file change it the same way"
    )
    func renderWithEffects() throws {
        try withTemporaryFolder("effects") { directory in
            func render(_ name: String, _ extra: [String]) throws -> [Float] {
                try renderDemoSong(into: directory + "/\(name).wav", extra)
            }
            let plain = try render("plain", [])
            #expect(try render("bypassed", ["--fx", "eq:type=lowPass,freq=200,bypass=on"]) == plain)
            let filtered = try render("filtered", ["--fx", "filter:type=lowPass,freq=300"])
            let chain = directory + "/chain.json"
            try Data(#"[{"effect": "filter", "type": "lowPass", "freq": 300}]"#.utf8).write(
                to: URL(fileURLWithPath: chain))
            #expect(try render("chained", ["--fx-chain", chain]) == filtered)
            // High frequencies are gone: the first difference (a crude high-pass) loses most of its energy.
            func highEnergy(_ samples: [Float]) -> Double {
                zip(samples.dropFirst(2), samples).reduce(0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
            }
            #expect(highEnergy(filtered) < highEnergy(plain) / 20)
        }
    }

    @Test("render --fx limiter: the look-ahead is compensated: the music starts on the same frame, the length is kept")
    func renderLimiterIsAligned() throws {
        try withTemporaryFolder("effects") { directory in
            func render(_ name: String, _ extra: [String]) throws -> [Float] {
                try renderDemoSong(into: directory + "/\(name).wav", ["--tail", "1"] + extra)
            }
            let plain = try render("plain", [])
            let limited = try render("limited", ["--fx", "limiter:attack=20,ceiling=-1"])
            #expect(limited.count == plain.count, "\(limited.count) samples, \(plain.count) without the limiter")
            let onset = { (samples: [Float]) in samples.firstIndex { abs($0) > 1e-3 } ?? -1 }
            #expect(abs(onset(limited) - onset(plain)) <= 2, "onsets \(onset(limited)) and \(onset(plain))")
            // Below the ceiling the limiter is a pure (compensated) delay: the same samples.
            let quiet = zip(plain, limited).prefix(20_000).map { abs($0 - $1) }.max() ?? 1
            #expect(quiet < 1e-6, "the first 10 000 frames differ by \(quiet)")
        }
    }

    @Test(
        "process --fx varispeed and timepitch: a 1 kHz sine's length and pitch as asked (±0.1 Hz)"
    )
    func processVarispeed() throws {
        try withTemporaryFolder("effects") { directory in
            let sine = (0..<96_000).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
            try writeFloatWAV(sine, channels: 1, rate: 48_000, to: directory + "/sine.wav")
            func frequency(_ samples: [Float]) -> Double {
                var crossings: [Double] = []
                for n in 2_001..<(samples.count - 2_000) where samples[n - 1] < 0 && samples[n] >= 0 {
                    let (a, b) = (Double(samples[n - 1]), Double(samples[n]))
                    crossings.append(Double(n - 1) + a / (a - b))
                }
                return Double(crossings.count - 1) * 48_000 / (crossings.last! - crossings.first!)
            }
            for (fx, expected, pitch) in [
                ("varispeed:rate=1.5", 1.5, 1.5), ("varispeed:cents=-1200", 0.5, 0.5),
                ("timepitch:rate=0.8,pitch=300", 0.8, pow(2, 0.25)),
            ] {
                let result = try runPianola([
                    "process", directory + "/sine.wav", "-o", directory + "/out.wav", "--format", "f32", "-q",
                    "--force",
                    "--fx", fx,
                ])
                #expect(result.status == 0, "\(result.stderr)")
                let output = try readFloatWAV(directory + "/out.wav")
                #expect(abs(Double(output.count) - 96_000 / expected) <= 2, "\(fx): \(output.count) frames")
                let measured = frequency(output)
                #expect(abs(measured - 1_000 * pitch) < 0.1, "\(fx): \(measured) Hz")
            }
        }
    }

    @Test(
        "render --fx varispeed|timepitch: the song faster or slower, the same samples as `process` of the plain render"
    )
    func renderChangingPace() throws {
        try withTemporaryFolder("effects") { directory in
            let plain = try renderDemoSong(into: directory + "/plain.wav", ["--fx", "eq:type=lowshelf,gain=3"])
            for (fx, rate) in [("varispeed:rate=1.5", 1.5), ("timepitch:rate=0.8,pitch=300", 0.8)] {
                let tail = ["--fx", "limiter:ceiling=-3"]
                let rendered = try renderDemoSong(
                    into: directory + "/fast.wav", ["--fx", "eq:type=lowshelf,gain=3", "--fx", fx] + tail)
                let processed = try runPianola(
                    [
                        "process", directory + "/plain.wav", "-o", directory + "/processed.wav", "-q", "--force",
                        "--fx", fx,
                    ]
                        + tail)
                #expect(processed.status == 0, "\(processed.stderr)")
                let reference = try readFloatWAV(directory + "/processed.wav")
                #expect(rendered.count == reference.count, "\(fx): \(rendered.count) and \(reference.count) samples")
                let differing = zip(rendered, reference).filter { $0 != $1 }.count
                #expect(differing == 0, "\(fx): \(differing) samples differ")
                #expect(
                    abs(Double(rendered.count) - Double(plain.count) / rate) <= 2 * 44_100 * 0.01,
                    "\(fx): \(rendered.count / 2) frames against \(plain.count / 2) plain")
            }
            // The summary speaks of the output: the music's length at the new pace.
            func musicSeconds(_ extra: [String]) throws -> Double {
                let json = try runPianola(
                    ["render", demoSong, "-o", directory + "/json.wav", "-s", bundledFontPath, "--json", "--force"]
                        + extra)
                #expect(json.status == 0, "\(json.stderr)")
                let line = try #require(json.stdout.split(separator: "\n").last)
                let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return try #require(summary["musicSeconds"] as? Double)
            }
            let (normal, fast) = (try musicSeconds([]), try musicSeconds(["--fx", "varispeed:rate=2"]))
            #expect(abs(fast - normal / 2) < 0.02, "\(fast) s of music at rate 2, \(normal) s at 1")
            // With a channel map, the graph `play` plays renders at the pace too: the song in the
            // pair of its parts, as the plain render processed has it.
            let mapped = try runPianola([
                "render", "-q", demoSong, "-o", directory + "/mapped.wav", "-s", bundledFontPath, "--format", "f32",
                "--channel-map", "10:3-4", "--fx", "varispeed:rate=2",
            ])
            #expect(mapped.status == 0, "\(mapped.stderr)")
            let quad = try readFloatWAV(directory + "/mapped.wav")
            var folded = [Float](repeating: 0, count: quad.count / 2)
            for index in folded.indices {
                let (frame, channel) = (index / 2, index % 2)
                folded[index] = quad[4 * frame + channel] + quad[4 * frame + 2 + channel]
            }
            let reference = try renderDemoSong(into: directory + "/fast.wav", ["--fx", "varispeed:rate=2"])
            let (correlation, levels) = envelopeMatch(folded, reference, frames: 44_100 * 15 / 2)
            #expect(correlation > 0.97 && abs(levels - 1) < 0.05, "correlation \(correlation), levels \(levels)")
            // FluidSynth's player timing cannot run at a rate: refused, not rendered at the wrong pace.
            let timed = try runPianola([
                "render", "-q", demoSong, "-o", directory + "/timed.wav", "-s", bundledFontPath, "--channel-map",
                "10:3-4",
                "--timing", "fluidsynth", "--fx", "varispeed:rate=2",
            ])
            #expect(timed.status != 0)
            #expect(timed.stderr.contains("no start, speed or rate effect with it"), "\(timed.stderr)")
            // Stems would no longer line up with the mix: refused in one line, nothing written.
            let stems = try runPianola([
                "render", "-q", demoSong, "--stems", "channel", "-o", directory + "/stems", "-s", bundledFontPath,
                "--fx", "timepitch:rate=2",
            ])
            #expect(stems.status != 0)
            #expect(stems.stderr.contains("timepitch: changes the pace"), "\(stems.stderr)")
        }
    }

    @Test("render --fx distortion: mix 0 is the plain render (58 frames compensated); a preset changes the sound")
    func renderDistortion() throws {
        try withTemporaryFolder("effects") { directory in
            func render(_ name: String, _ extra: [String]) throws -> [Float] {
                try renderDemoSong(into: directory + "/\(name).wav", ["--tail", "1"] + extra)
            }
            let plain = try render("plain", [])
            // (1×: a debug build renders 8× slowly; every factor has the same latency.)
            let dry = try render("dry", ["--fx", "distortion:preset=crunch,mix=0,oversampling=1"])
            #expect(dry == plain, "mix 0 differs from the plain render (\(dry.count) and \(plain.count) samples)")
            let crunch = try render("crunch", ["--fx", "distortion:preset=crunch,oversampling=1"])
            #expect(crunch.count == plain.count)
            let difference = zip(plain, crunch).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
            #expect(difference > 1, "the crunch preset hardly changes the render (\(difference))")
        }
    }

    @Test("render --fx delay:time=1/4 follows the song's tempo (a beat late, to the sample); the tail keeps the echoes")
    func renderDelayFollowsTempo() throws {
        try withTemporaryFolder("effects") { directory in
            func render(_ name: String, _ extra: [String]) throws -> [Float] {
                try renderDemoSong(into: directory + "/\(name).wav", extra)
            }
            // The demo song starts at 120 BPM: a quarter note is 0.5 s, 22 050 frames at 44.1 kHz.
            let dry = try render("dry", ["--tail", "2"])
            let wet = try render("wet", ["--tail", "2", "--fx", "delay:time=1/4,feedback=0,mix=100,lowpass=96000"])
            let lag = 2 * 22_050
            #expect(wet[0..<lag].allSatisfy { $0 == 0 })
            let difference = zip(wet[lag...], dry).map { abs($0 - $1) }.max() ?? 1
            #expect(difference < 1e-6, "the echo differs from the dry render a beat earlier by \(difference)")
            // The automatic tail waits for echoes across the quiet between them: a 1-second delay at
            // 50 % feedback rings on for seconds after the last note's release.
            let automatic = try render("plain", [])
            let echoing = try render("echoing", ["--fx", "delay:time=1/2,feedback=50,mix=50"])
            #expect(
                echoing.count >= automatic.count + 2 * 44_100 * 4, "\(echoing.count) and \(automatic.count) samples")
        }
    }
}
