import Foundation
import TestSupport
import Testing

/// The JSON objects of the lines of `text`.
private func jsonObjects(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

@Suite("What render reports: clipping, peak and loudness, JSON; GM names in info", .serialized)
struct RenderReportTests {
    @Test("a render that clips says how many samples and what to do; the summary always has peak and loudness")
    func clipping() throws {
        try withTemporaryFolder("report") { directory in
            var result = try runPianola([
                "render", demoSong, "-o", directory + "/loud.wav", "-s", bundledFontPath, "-g", "20",
            ])
            #expect(result.status == 0)
            let warning = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("warning:") })
            #expect(warning.contains("samples clipped") && warning.contains("use --gain or --loudness"), "\(warning)")
            result = try runPianola(
                [
                    "render", demoSong, "-o", directory + "/loud-float.wav", "-s", bundledFontPath, "-g", "20",
                    "--format",
                    "f32",
                ])
            #expect(result.stderr.contains("samples above 0 dBFS"), "\(result.stderr)")
            result = try runPianola(["render", demoSong, "-o", directory + "/plain.wav", "-s", bundledFontPath])
            #expect(!result.stderr.contains("warning:"), "\(result.stderr)")
            #expect(result.stdout.contains(" dBFS, ") && result.stdout.contains(" LUFS, "), "\(result.stdout)")
        }
    }

    @Test("render --json: one object per output, rendered or failed, with its figures and fonts")
    func json() throws {
        try withTemporaryFolder("report") { directory in
            let notMIDI = directory + "/notes.mid"
            try Data("not MIDI".utf8).write(to: URL(fileURLWithPath: notMIDI))
            let result = try runPianola(
                ["render", demoSong, notMIDI, "-o", directory + "/out", "-s", bundledFontPath, "--json", "-j", "2"])
            #expect(result.status == 1)
            let objects = jsonObjects(result.stdout)
            #expect(objects.count == 2, "\(result.stdout)")
            let rendered = try #require(objects.first { $0["status"] as? String == "rendered" })
            #expect((rendered["output"] as? String)?.hasSuffix("/out/demo-song.wav") == true)
            #expect((rendered["seconds"] as? Double ?? 0) > 15 && rendered["loudness"] is Double)
            #expect(rendered["peakDecibels"] is Double && rendered["samplesOverFullScale"] as? Int == 0)
            #expect(rendered["soundFonts"] as? [String] == [bundledFontPath])
            let failed = try #require(objects.first { $0["status"] as? String == "failed" })
            #expect((failed["error"] as? String)?.contains("not a MIDI file") == true)
        }
    }

    @Test("info names each program's General MIDI instrument (and channel 10's kit), in text and JSON")
    func instrumentNames() throws {
        let text = try runPianola(["info", demoSong]).stdout
        #expect(text.contains("prog 0 (Acoustic Grand Piano)") && text.contains("prog 33 (Finger Bass)"), "\(text)")
        let json = try runPianola(["info", "--json", demoSong]).stdout
        let files = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let programs = (files.first?["tracks"] as? [[String: Any]] ?? []).flatMap {
            $0["programs"] as? [[String: Any]] ?? []
        }
        #expect(programs.contains { $0["program"] as? Int == 48 && $0["name"] as? String == "String Ensemble 1" })
    }
}
