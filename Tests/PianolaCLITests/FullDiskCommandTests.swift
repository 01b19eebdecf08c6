import Foundation
import TestSupport
import Testing

@Suite("render on a full disk", .serialized)
struct FullDiskCommandTests {
    @Test(
        "a ledger and failure log on a full disk: the output still counts as rendered, each log's failure is reported as such, nothing empty is left"
    )
    func logsOnAFullDisk() throws {
        let mounted = SmallFileSystem.mount(kilobytes: 128)
        guard case .success(let disk) = mounted else {
            if case .failure(let reason) = mounted { print("skipped: \(reason.text)") }
            return
        }
        try withTemporaryFolder("full-disk") { outputs in
            // The manifest sits on the full disk, so its ledger and failure log go there too.
            let manifest = disk.path + "/jobs.jsonl"
            let lines = [
                #"{"input": "\#(demoSong)", "output": "\#(outputs)/good.wav", "tail": 0.5}"#,
                #"{"input": "\#(outputs)/missing.mid", "output": "\#(outputs)/bad.wav"}"#,
            ]
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: manifest))
            disk.fill()
            let result = try runPianola(["render", "--manifest", manifest, "-s", bundledFontPath])
            #expect(result.status == 1)
            #expect(
                result.stderr.contains(
                    "good.wav: rendered, but not recorded in the ledger (the next run renders it again): "
                        + "no space left on device (\(disk.path)/jobs.done.jsonl)"), "\(result.stderr)")
            #expect(
                result.stderr.contains("the failure log: no space left on device (\(disk.path)/jobs.failures.jsonl)"))
            #expect(result.stderr.contains("1 rendered, 0 already done, 1 failed (2 jobs)"))
            #expect(result.stderr.contains("the failure log \(disk.path)/jobs.failures.jsonl could not be written"))
            #expect(try wavStats(outputs + "/good.wav").peak > 0.01)
            #expect(disk.files == ["jobs.jsonl"])
        }
    }

    @Test("an output on a full disk: one line, 'no space left on device (PATH)', and nothing left behind")
    func outputOnAFullDisk() throws {
        let mounted = SmallFileSystem.mount(kilobytes: 256)
        guard case .success(let disk) = mounted else {
            if case .failure(let reason) = mounted { print("skipped: \(reason.text)") }
            return
        }
        for name in ["out.wav", "out.flac", "out.ogg"] {
            disk.fill()
            let result = try runPianola(["render", "-s", bundledFontPath, demoSong, "-o", disk.path + "/" + name])
            #expect(result.status == 1)
            // The free-space check refuses first; a disk that fills up while rendering says the same.
            #expect(result.stderr.contains(disk.path + "/" + name), "\(result.stderr)")
            #expect(disk.files.isEmpty, "\(name) left \(disk.files)")
            unlink(disk.path + "/filler")
        }
    }

    @Test("the free-space check counts the song and the tail asked for; a read-only disk is named as such")
    func freeSpaceEstimate() throws {
        let mounted = SmallFileSystem.mount(kilobytes: 2_048)
        guard case .success(let disk) = mounted else {
            if case .failure(let reason) = mounted { print("skipped: \(reason.text)") }
            return
        }
        // A one-second note: a WAV of about 400 KB fits in 2 MB (a 30-second tail reserved did not).
        let song = disk.path + "/note.mid"
        let bytes: [UInt8] =
            smallSong([0, 0x90, 60, 100, 0x81, 0x40, 0x80, 60, 0])
        try Data(bytes).write(to: URL(fileURLWithPath: song))
        for name in ["note.wav", "note.ogg"] {
            let result = try runPianola(["render", "-s", bundledFontPath, song, "-o", disk.path + "/" + name, "-q"])
            #expect(result.status == 0, "\(result.stderr)")
        }
        // A fixed tail counts as asked: 20 s of it do not fit.
        let long = try runPianola(
            ["render", "-s", bundledFontPath, song, "-o", disk.path + "/long.wav", "--tail", "20", "-q"])
        #expect(long.status == 1 && long.stderr.contains("the render needs about"), "\(long.stderr)")
        #expect(disk.files == ["note.mid", "note.ogg", "note.wav"])

        let readOnly = SmallFileSystem.mount(kilobytes: 1_024, readOnly: true)
        guard case .success(let locked) = readOnly else { return }
        let refused = try runPianola(["render", "-s", bundledFontPath, song, "-o", locked.path + "/x.wav", "-q"])
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "pianola: \(song): \(locked.path)/x.wav: cannot write it (the file system there is read-only)\n",
            "\(refused.stderr)")
    }
}
