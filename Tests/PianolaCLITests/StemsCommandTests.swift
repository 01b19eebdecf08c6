import Foundation
import SMF
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

    @Test("-o with an audio file's extension is refused for stems (exit 64, one line saying to give a folder)")
    func audioFileOutput() throws {
        try withTemporaryFolder("stems") { directory in
            for name in ["stems.wav", "stems.FLAC", "stems.ogg"] {
                let result = try runPianola([
                    "render", demoSong, "--stems", "track", "-o", directory + "/" + name, "-s", bundledFontPath,
                ])
                #expect(result.status == 64, "\(name): \(result.status) \(result.stderr)")
                let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
                #expect(errors.count == 1 && errors[0].contains("give a folder"), "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory + "/" + name), "\(name) was made")
            }
        }
    }

    @Test(
        "stems by track: files numbered as info and stems.json number tracks, names without their padding, each stem's peak shown and in stems.json"
    )
    func trackNumbersNamesAndPeaks() throws {
        try withTemporaryFolder("stems") { directory in
            // Track 0 is the tempo track; the others are padded as MIDI files from old sequencers are.
            let names: [String?] = [
                nil, "  Lead   ", "Bass\u{0}\u{0}\u{0}\u{0}", nil,
                "  A very long track name that goes on and on past forty  ",
            ]
            var tracks: [MIDIFile.Track] = []
            for (index, name) in names.enumerated() {
                var events: [MIDIFile.Event] = []
                if let name { events.append(MIDIFile.Event(tick: 0, .meta(.text(.trackName, Array(name.utf8))))) }
                if index > 0 {
                    let channel = UInt8(index - 1)
                    events.append(MIDIFile.Event(tick: 0, .channel(on(UInt8(48 + 5 * index), channel: channel))))
                    events.append(MIDIFile.Event(tick: 480, .channel(off(UInt8(48 + 5 * index), channel: channel))))
                }
                events.append(MIDIFile.Event(tick: 480, .meta(.endOfTrack)))
                tracks.append(MIDIFile.Track(events: events))
            }
            let song = directory + "/padded.mid"
            try MIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: tracks).write(to: song)
            let folder = directory + "/stems"
            let result = try runPianola([
                "render", song, "-o", folder, "--stems", "track", "-s", bundledFontPath, "--format", "f32", "--tail",
                "0.2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: folder + "/stems.json"))
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let stems = try #require(document["stems"] as? [[String: Any]]).dropFirst()
            #expect(
                stems.compactMap { $0["file"] as? String } == [
                    "track-01-lead.wav", "track-02-bass.wav", "track-03-track-3.wav",
                    "track-04-a-very-long-track-name-that-goes-on-and.wav",
                ])
            #expect(
                stems.compactMap { $0["name"] as? String } == [
                    "Lead", "Bass", "track 3", "A very long track name that goes on and on past forty",
                ])
            // The track `info` numbers N is stems.json's track N and the file track-0N.
            let info = try runPianola(["info", song, "--json"])
            let described = try #require(
                (try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]])?.first)
            let infoTracks = try #require(described["tracks"] as? [[String: Any]])
            for stem in stems {
                let track = try #require((stem["tracks"] as? [Int])?.first)
                let entry = try #require(infoTracks.first { $0["index"] as? Int == track })
                #expect(entry["noteCount"] as? Int == stem["notes"] as? Int, "\(entry) against \(stem)")
                #expect((stem["file"] as? String)?.hasPrefix("track-0\(track)-") == true, "\(stem)")
            }
            // Each stem's peak: in stems.json (what its float file holds) and in the summary.
            let summary = result.stdout.split(separator: "\n")
            for stem in stems {
                let file = try #require(stem["file"] as? String)
                let samples = try readFloatWAV(folder + "/" + file)
                let measured = 20 * log10(Double(samples.map(abs).max() ?? 0))
                let peak = try #require((stem["peak"] as? NSNumber)?.doubleValue, "\(stem)")
                #expect(abs(peak - measured) < 0.01, "\(file): stems.json \(peak), file \(measured)")
                let line = try #require(summary.first { $0.contains(file) }, "\(result.stdout)")
                #expect(line.contains("peak \(String(format: "%.1f", peak)) dBFS"), "\(line)")
                #expect(line.contains("1 note,"), "\(line)")
            }
            #expect(result.stdout.contains("4 stems by track + mix"), "\(result.stdout)")
            // --json: a line per stem with its peak.
            let json = try runPianola([
                "render", song, "-o", folder, "--stems", "track", "-s", bundledFontPath, "--tail", "0.2", "--json",
                "--force",
            ])
            let lines = json.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(lines.count == 5 && lines.allSatisfy { $0["peakDecibels"] is NSNumber }, "\(json.stdout)")
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
