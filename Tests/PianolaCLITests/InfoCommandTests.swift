import Foundation
import TestSupport
import Testing

/// The shared corpus beside the checkout.
let sharedCorpus: String = {
    let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return checkout.deletingLastPathComponent().appendingPathComponent("shared/corpus").path
}()

/// Writes `bytes` to `name` in `folder`; returns the path.
func writeFile(_ bytes: [UInt8], name: String, in folder: String) throws -> String {
    let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
}

/// A format-1 file: tempo 100 BPM, 3/4, then a C-major scale on channel 1 with program 5.
let infoFixture: [UInt8] = {
    var track: [UInt8] = [0x00, 0xFF, 0x03, 0x04] + Array("Lead".utf8)
    track += [
        0x00, 0xFF, 0x51, 0x03, 0x09, 0x27, 0xC0, 0x00, 0xFF, 0x58, 0x04, 0x03, 0x02, 0x18, 0x08, 0x00, 0xC0, 0x05,
    ]
    for (index, key) in [60, 62, 64, 65, 67, 69, 71, 72].enumerated() {
        track += [index == 0 ? 0x00 : 0x00, 0x90, UInt8(key), 0x64, 0x60, 0x80, UInt8(key), 0x40]
    }
    track += [0x00, 0xFF, 0x2F, 0x00]
    let length = track.count
    return Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, 1, 0, 0x60] + Array("MTrk".utf8)
        + [0, 0, UInt8(length >> 8), UInt8(length & 0xFF)] + track
}()

@Suite("pianola info", .serialized)
struct InfoCommandTests {
    @Test("text output names format, tempo, meter, tracks, notes and says there are no defects")
    func text() throws {
        try withTemporaryFolder("info") { folder in
            let path = try writeFile(infoFixture, name: "scale.mid", in: folder)
            let result = try runPianola(["info", path])
            #expect(result.status == 0)
            #expect(result.stdout.contains("format 1, 96 ticks per quarter note, 1 track,"))
            #expect(result.stdout.contains("8 notes"))
            #expect(result.stdout.contains("tempo 100 BPM, time 3/4"))
            #expect(result.stdout.contains("\"Lead\"  ch 1  prog 5 (Electric Piano 2)  8 notes"), "\(result.stdout)")
            #expect(result.stdout.contains("no defects"))
        }
    }

    @Test("an SMPTE-timed file has no tempo: info says so instead of printing 120 BPM (text and JSON)")
    func smpteHasNoTempo() throws {
        // Division 25 fps × 40 ticks per frame: a tick is 1 ms. The file's tempo event does not apply.
        var bytes = infoFixture
        bytes[12] = 0xE7  // −25
        bytes[13] = 40
        try withTemporaryFolder("info") { folder in
            let path = try writeFile(bytes, name: "smpte.mid", in: folder)
            let text = try runPianola(["info", path])
            #expect(text.status == 0)
            #expect(text.stdout.contains("25 fps"), "\(text.stdout)")
            #expect(!text.stdout.contains("BPM"), "\(text.stdout)")
            #expect(text.stdout.contains("tempo none (SMPTE time"), "\(text.stdout)")
            let json = try runPianola(["info", "--json", path])
            let objects = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect((objects.first?["tempoChanges"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("--json has the documented keys; a damaged file has diagnostics; a rejected file has an error and exit 1")
    func json() throws {
        try withTemporaryFolder("info") { folder in
            let good = try writeFile(infoFixture, name: "good.mid", in: folder)
            let damaged = try writeFile(infoFixture + [0x00], name: "damaged.mid", in: folder)
            let rejected = try writeFile(Array("hello".utf8), name: "notes.txt", in: folder)
            let result = try runPianola(["info", "--json", good, damaged, rejected])
            #expect(result.status == 1)
            let objects = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            #expect(objects.count == 3)
            for key in [
                "path", "format", "division", "trackCount", "noteCount", "durationSeconds", "tempoChanges",
                "diagnostics",
                "error",
            ] {
                #expect(objects.allSatisfy { $0.keys.contains(key) }, "missing \(key)")
            }
            #expect(objects[0]["noteCount"] as? Int == 8)
            #expect(objects[0]["error"] is NSNull)
            #expect((objects[0]["durationSeconds"] as? Double).map { abs($0 - 4.8) < 0.001 } == true)
            let diagnostics = try #require(objects[1]["diagnostics"] as? [[String: Any]])
            #expect(diagnostics.first?["kind"] as? String == "extraBytesAtEnd")
            #expect(diagnostics.first?["offset"] as? Int == infoFixture.count)
            #expect((objects[2]["error"] as? String)?.contains("not a MIDI file: a text file") == true)
        }
    }

    @Test("a missing file is one clear line and exit status 1")
    func missingFile() throws {
        let result = try runPianola(["info", "/no/such/song.mid"])
        #expect(result.status == 1)
        #expect(
            result.stderr == "pianola: /no/such/song.mid: cannot read /no/such/song.mid: No such file or directory\n")
    }

    @Test("thousands of files, options among them and a file after --: every one reported, in order")
    func manyFilesAndOptions() throws {
        try withTemporaryFolder("info") { folder in
            let song = try writeFile(infoFixture, name: "song.mid", in: folder)
            let odd = try writeFile(infoFixture, name: "-odd.mid", in: folder)
            let missing = (0..<6_000).map { "/no/such/\($0).mid" }
            let result = try runPianola(
                ["info", song, "--jobs", "2"] + missing + ["--json", song, "--", odd, "--strict"])
            #expect(result.status == 1)
            // --json, given among the files, applies: one object a line, errors inside them.
            let objects = result.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(objects.count == 6_004 && result.stderr.isEmpty, "\(result.stderr.prefix(300))")
            func path(_ index: Int) -> String {
                // Each object's line ends with the array's comma, but the last.
                let line = objects[index].hasSuffix(",") ? objects[index].dropLast() : objects[index]
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                else { return "" }
                return object["path"] as? String ?? ""
            }
            #expect(path(0) == song && path(1) == "/no/such/0.mid" && path(6_000) == "/no/such/5999.mid")
            #expect(path(6_001) == song && path(6_002) == odd)
            // "--strict" after "--" is a file name, as the argument parser reads it.
            #expect(path(6_003) == "--strict")
            #expect(objects.filter { $0.contains("\"error\":null") }.count == 3)
        }
    }

    @Test("--json escapes quotes, backslashes and control characters and keeps other UTF-8 as it is")
    func jsonEscapes() throws {
        let name = "Say \"hi\" \\ tab\there\u{1} é ♪"
        var track: [UInt8] = [0x00, 0xFF, 0x03, UInt8(name.utf8.count)] + Array(name.utf8)
        track += [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 64, 0x00, 0xFF, 0x2F, 0x00]
        let bytes =
            Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, 1, 0, 0x60] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
        try withTemporaryFolder("info") { folder in
            let result = try runPianola(["info", "--json", try writeFile(bytes, name: "quoted.mid", in: folder)])
            #expect(result.stdout.contains(#""name":"Say \"hi\" \\ tab\there\u0001 é ♪""#), "\(result.stdout)")
            let files = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            let tracks = try #require(files.first?["tracks"] as? [[String: Any]])
            #expect(tracks.first?["name"] as? String == name)
        }
    }

    @Test(
        "works on every file of the shared corpus (no crash; JSON for each)",
        .enabled(if: FileManager.default.fileExists(atPath: sharedCorpus), "shared corpus absent: skipped"))
    func wholeCorpus() throws {
        let enumerator = FileManager.default.enumerator(atPath: sharedCorpus)!
        let files = (enumerator.allObjects as! [String]).filter {
            [".mid", ".rmi"].contains(where: $0.lowercased().hasSuffix)
        }
        .map { sharedCorpus + "/" + $0 }
        #expect(files.count > 380)
        let result = try runPianola(["info", "--json"] + files)
        #expect(result.status == 1, "20 corpus files are not MIDI at all (HTML, text, WAVE, a tracker module...)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(objects.count == files.count)
        let rejected = objects.filter { !($0["error"] is NSNull) }
        #expect(rejected.count == 20, "\(rejected.map { $0["path"]! })")
    }

    @Test("files read at once are reported in the order given, one JSON object per line, text and errors alike")
    func orderAcrossThreads() throws {
        var damaged = infoFixture
        damaged[damaged.count - 5] = 0xF4
        // 150 files: with --jobs 4 they are claimed in batches of four (see forEachInOrder).
        try withTemporaryFolder("info") { folder in
            let paths = try (0..<150).map { index in
                switch index % 3 {
                case 0: return try writeFile(infoFixture, name: "song\(index).mid", in: folder)
                case 1: return try writeFile(damaged, name: "damaged\(index).mid", in: folder)
                default: return try writeFile(Array("not midi \(index)".utf8), name: "text\(index).mid", in: folder)
                }
            }
            for format in [["--json"], []] {
                let one = try runPianola(["info", "--jobs", "1"] + format + paths)
                let four = try runPianola(["info", "--jobs", "4"] + format + paths)
                #expect(one.status == 1 && four.status == 1)
                #expect(one.stdout == four.stdout)
                #expect(one.stderr == four.stderr)
                // Text reports name each rejected file on standard error too; JSON carries it in "error".
                #expect(four.stderr.split(separator: "\n").count == (format.isEmpty ? 50 : 0), "\(four.stderr)")
            }
            let json = try runPianola(["info", "--json"] + paths)
            let lines = json.stdout.split(separator: "\n")
            #expect(lines.count == 152 && lines.first == "[" && lines.last == "]", "\(json.stdout.prefix(300))")
            for (index, line) in lines.dropFirst().dropLast().enumerated() {
                #expect(line.hasPrefix("{") && line.contains("\"path\":\"\(paths[index])\""))
            }
            let objects = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(objects.map { $0["path"] as? String } == paths)
        }
    }
}
