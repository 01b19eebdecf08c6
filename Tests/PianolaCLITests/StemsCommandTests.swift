import Foundation
import TestSupport
import Testing

@Suite("pianola render --stems")
struct StemsCommandTests {
    @Test(
        "stems by track, channel and program: one pass, same length, notes shared out exactly, summing to the mix within −60 dB",
        arguments: ["track", "channel", "program"])
    func stems(mode: String) throws {
        try withTemporaryFolder("stems") { directory in
            let folder = directory + "/stems"
            let result = try runPianola([
                "render", "-q", demoSong, "-o", folder, "--stems", mode, "-s", bundledFontPath, "--format", "f32",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: folder + "/stems.json"))
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let entries = try #require(document["stems"] as? [[String: Any]])
            #expect(document["mode"] as? String == mode)
            let mix = try #require(entries.first)
            #expect(mix["file"] as? String == "mix.wav" && mix["kind"] as? String == "mix")
            let stems = Array(entries.dropFirst())
            #expect(stems.count == 5, "the demo song has five instruments: \(stems.map { $0["name"] ?? "" })")
            let notes = stems.compactMap { ($0["notes"] as? NSNumber)?.intValue }
            #expect(notes.reduce(0, +) == (mix["notes"] as? NSNumber)?.intValue, "every note in exactly one stem")
            for stem in stems { #expect((stem["loudness"] as? NSNumber).map { $0.doubleValue < 0 } == true, "\(stem)") }
            switch mode {
            case "track":
                #expect(stems.compactMap { $0["name"] as? String } == ["Piano", "Bass", "Strings", "Flute", "Drums"])
            case "channel":
                #expect(stems.compactMap { ($0["channels"] as? [NSNumber])?.first?.intValue } == [1, 2, 3, 4, 10])
            default:
                #expect(
                    stems.compactMap { $0["family"] as? String } == ["piano", "bass", "ensemble", "pipe", "drums"])
            }
            // Every file the same length; the stems sum to the mix.
            let mixSamples = try readFloatWAV(folder + "/mix.wav")
            var sum = [Float](repeating: 0, count: mixSamples.count)
            for stem in stems {
                let samples = try readFloatWAV(folder + "/" + (stem["file"] as? String ?? ""))
                #expect(samples.count == mixSamples.count)
                for index in 0..<min(samples.count, sum.count) { sum[index] += samples[index] }
            }
            var signal = 0.0
            var residual = 0.0
            for index in mixSamples.indices {
                signal += Double(mixSamples[index]) * Double(mixSamples[index])
                residual += Double(sum[index] - mixSamples[index]) * Double(sum[index] - mixSamples[index])
            }
            let decibels = 10 * log10(max(residual, 1e-30) / signal)
            #expect(decibels < -60, "stems minus mix: \(decibels) dB")
            // The mix is the same music as a plain render: FluidSynth is additive across synthesizers
            // up to the first block of some notes (BENCHMARKS.md, the channel split).
            #expect(
                try runPianola([
                    "render", "-q", demoSong, "-o", directory + "/plain.wav", "-s", bundledFontPath, "--format", "f32",
                ]).status == 0)
            let plain = try readFloatWAV(directory + "/plain.wav")
            #expect(plain.count == mixSamples.count)
            var difference = 0.0
            for index in 0..<min(plain.count, mixSamples.count) {
                difference += Double(plain[index] - mixSamples[index]) * Double(plain[index] - mixSamples[index])
            }
            let snr = 10 * log10(signal / max(difference, 1e-30))
            #expect(snr > 35, "mix against a plain render: \(snr) dB")
        }
    }

    @Test("--multichannel: one file with every stem on its own pair of channels, each pair bit for bit its stem")
    func multichannel() throws {
        try withTemporaryFolder("stems") { directory in
            let folder = directory + "/stems"
            let result = try runPianola([
                "render", "-q", demoSong, "-o", folder, "--stems", "channel", "--multichannel", directory + "/all.wav",
                "-s", bundledFontPath, "--format", "f32",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: folder + "/stems.json"))
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(document["multichannel"] as? String == directory + "/all.wav")
            let stems = try #require(document["stems"] as? [[String: Any]]).dropFirst()
            let all = try readFloatWAV(directory + "/all.wav")
            let width = 2 * stems.count
            #expect(stems.count == 5 && all.count % width == 0)
            for (k, stem) in stems.enumerated() {
                let own = try readFloatWAV(folder + "/" + (stem["file"] as? String ?? ""))
                #expect(own.count / 2 == all.count / width, "\(stem["name"] ?? k): \(own.count / 2) frames")
                var same = true
                for frame in 0..<min(own.count / 2, all.count / width) {
                    same =
                        same && all[frame * width + 2 * k] == own[2 * frame]
                        && all[frame * width + 2 * k + 1] == own[2 * frame + 1]
                }
                #expect(same, "channels \(2 * k + 1)-\(2 * k + 2) are not stem \(stem["name"] ?? k)")
            }
            let bad = try runPianola([
                "render", demoSong, "-o", directory + "/x.wav", "--multichannel", directory + "/y.wav",
            ])
            #expect(bad.status != 0 && bad.stderr.contains("give --stems too"), "\(bad.stderr)")
        }
    }

    @Test("--stems with --loudness: the mix measures the target, and stems.json says so")
    func stemsAtALoudness() throws {
        try withTemporaryFolder("stems-loudness") { directory in
            let folder = directory + "/stems"
            let result = try runPianola([
                "render", "-q", demoSong, "-o", folder, "--stems", "track", "--loudness", "-23", "-s", bundledFontPath,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: folder + "/stems.json"))
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let mix = try #require((document["stems"] as? [[String: Any]])?.first)
            let loudness = try #require((mix["loudness"] as? NSNumber)?.doubleValue)
            #expect(abs(loudness + 23) < 0.1, "the mix at \(loudness) LUFS")
        }
    }

    @Test("bad --stems uses are one clear line and a non-zero exit")
    func badUses() throws {
        try withTemporaryFolder("stems") { directory in
            let cases: [([String], String)] = [
                (["--stems", "instrument"], "--stems must be track, channel or program"),
                (["--stems", "track", demoSong], "--stems renders one MIDI file"),
            ]
            for (extra, message) in cases {
                let result = try runPianola(
                    ["render", demoSong, "-o", directory + "/x", "-s", bundledFontPath] + extra)
                #expect(result.status != 0)
                #expect(result.stderr.contains(message), "\(extra): \(result.stderr)")
            }
        }
    }
}
