import AudioFiles
import Foundation
import Meters
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A corpus of `count` copies of the demo song in a nested folder tree, plus one file that is
/// not MIDI; returns the corpus folder.
private func makeCorpus(in directory: String, count: Int) throws -> String {
    let corpus = directory + "/corpus"
    let song = try Data(contentsOf: URL(fileURLWithPath: demoSong))
    for index in 0..<count {
        let folder = corpus + (index % 3 == 0 ? "" : "/set\(index % 3)") + (index % 2 == 0 ? "" : "/deep")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try song.write(to: URL(fileURLWithPath: folder + "/song\(index).mid"))
    }
    try Data("not a MIDI file".utf8).write(to: URL(fileURLWithPath: corpus + "/set1/broken.mid"))
    return corpus
}

/// The JSON objects of a JSON Lines file.
private func jsonLines(_ path: String) -> [[String: Any]] {
    guard let data = FileManager.default.contents(atPath: path) else { return [] }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// Every regular file under `folder` (relative paths), hidden ones included.
private func filesUnder(_ folder: String) -> [String] {
    var found: [String] = []
    let walker = FileManager.default.enumerator(atPath: folder)
    while let next = walker?.nextObject() as? String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder + "/" + next, isDirectory: &isFolder), !isFolder.boolValue {
            found.append(next)
        }
    }
    return found.sorted()
}

/// Under `folder`, a chain of folders whose path grows past PATH_MAX, made through descriptors,
/// with a MIDI file at its bottom: its deepest folders cannot be listed by path, by anyone (root
/// ignores permission bits, not path lengths). Removed with `rm -rf`, which descends by descriptor.
private func makeTooDeepFolder(under folder: String, song: Data) throws {
    struct CannotMake: Error {}
    var parent = open(folder, O_RDONLY | O_DIRECTORY)
    let name = String(repeating: "d", count: 250)
    for _ in 0..<18 {
        guard parent >= 0, mkdirat(parent, name, 0o755) == 0 else { throw CannotMake() }
        let child = openat(parent, name, O_RDONLY | O_DIRECTORY)
        close(parent)
        parent = child
    }
    let file = openat(parent, "lost.mid", O_WRONLY | O_CREAT, 0o644)
    close(parent)
    guard file >= 0 else { throw CannotMake() }
    defer { close(file) }
    guard song.withUnsafeBytes({ write(file, $0.baseAddress, $0.count) }) == song.count else { throw CannotMake() }
}

private func removeTree(_ path: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["rm", "-rf", path]
    try? process.run()
    process.waitUntilExit()
}

@Suite("Corpus jobs: folder trees, manifests, resuming, failures", .serialized)
struct CorpusJobTests {
    let font = bundledFontPath

    @Test(
        "a folder tree is mirrored; a bad file fails alone, in .pianola-failures.jsonl beside .pianola-done.jsonl; a rerun skips what is done and redoes what changed"
    )
    func folderTreeAndResume() throws {
        try withTemporaryFolder("corpus-job") { directory in
            let corpus = try makeCorpus(in: directory, count: 5)
            let output = directory + "/renders"
            var result = try runPianola(["render", corpus, "-o", output, "--jobs", "2", "-s", font, "--tail", "0.5"])
            #expect(result.status == 1, "a failed job makes the exit status 1")
            let rendered = filesUnder(output).filter { $0.hasSuffix(".wav") }
            #expect(
                rendered == ["deep/song3.wav", "set1/deep/song1.wav", "set1/song4.wav", "set2/song2.wav", "song0.wav"])
            let failures = jsonLines(output + "/.pianola-failures.jsonl")  // named like the ledger
            #expect(failures.count == 1)
            #expect((failures.first?["input"] as? String)?.hasSuffix("set1/broken.mid") == true)
            #expect((failures.first?["error"] as? String)?.contains("not a MIDI file") == true)
            #expect(result.stderr.contains("5 rendered, 0 already done, 1 failed"), "\(result.stderr)")
            let ledger = output + "/.pianola-done.jsonl"
            #expect(jsonLines(ledger).count == 5)
            let before =
                try FileManager.default.attributesOfItem(atPath: output + "/song0.wav")[.modificationDate] as? Date

            // Everything is done: nothing is rendered again, the files are untouched.
            result = try runPianola(["render", corpus, "-o", output, "--jobs", "2", "-s", font, "--tail", "0.5"])
            #expect(result.stderr.contains("0 rendered, 5 already done, 1 failed"), "\(result.stderr)")
            #expect(
                try FileManager.default.attributesOfItem(atPath: output + "/song0.wav")[.modificationDate] as? Date
                    == before)
            // One input changes, the options change for all: exactly what is affected is redone.
            var changed = try Data(contentsOf: URL(fileURLWithPath: corpus + "/song0.mid"))
            changed.append(contentsOf: [0])  // a trailing byte: another file, the same music
            try changed.write(to: URL(fileURLWithPath: corpus + "/song0.mid"))
            result = try runPianola(["render", corpus, "-o", output, "-s", font, "--tail", "0.5"])
            #expect(result.stderr.contains("1 rendered, 4 already done, 1 failed"), "\(result.stderr)")
            result = try runPianola(["render", corpus, "-o", output, "-s", font, "--tail", "0.6"])
            #expect(result.stderr.contains("5 rendered, 0 already done, 1 failed"), "\(result.stderr)")
            // A deleted output is rendered again.
            try FileManager.default.removeItem(atPath: output + "/deep/song3.wav")
            result = try runPianola(["render", corpus, "-o", output, "-s", font, "--tail", "0.6"])
            #expect(result.stderr.contains("1 rendered, 4 already done, 1 failed"), "\(result.stderr)")
        }
    }

    @Test("a folder under the input that cannot be listed fails as a job: its path and reason, in the summary")
    func unlistableFolder() throws {
        try withTemporaryFolder("corpus-job") { directory in
            defer { removeTree(directory) }
            let corpus = directory + "/corpus"
            try FileManager.default.createDirectory(atPath: corpus, withIntermediateDirectories: true)
            let song = try Data(contentsOf: URL(fileURLWithPath: demoSong))
            try song.write(to: URL(fileURLWithPath: corpus + "/song.mid"))
            try makeTooDeepFolder(under: corpus, song: song)
            let output = directory + "/renders"
            let result = try runPianola(["render", corpus, "-o", output, "-s", font, "--tail", "0.5"])
            #expect(result.status == 1, "\(result.stderr)")
            let line = try #require(
                result.stderr.split(separator: "\n").first { $0.contains("cannot list the folder") }, "\(result.stderr)"
            )
            #expect(
                line.hasPrefix("pianola: \(corpus)/ddd")
                    && line.hasSuffix(": cannot list the folder: File name too long"))
            #expect(result.stderr.contains("1 rendered, 0 already done, 1 failed (2 jobs)"), "\(result.stderr)")
            let failures = jsonLines(output + "/.pianola-failures.jsonl")
            #expect((failures.first?["error"] as? String)?.contains("cannot list the folder") == true, "\(failures)")
        }
    }

    @Test("a manifest: relative paths, per-job settings; bad lines fail their own job with the line number")
    func manifest() throws {
        try withTemporaryFolder("corpus-job") { directory in
            _ = try makeCorpus(in: directory, count: 2)
            let lines = [
                #"{"input": "corpus/song0.mid", "output": "out/a.wav", "tail": 0.5}"#,
                #"{"input": "corpus/set1/deep/song1.mid", "output": "out/b.flac", "rate": 48000, "tail": "0.5"}"#,
                #"this is not JSON"#,
                #"{"input": "corpus/song0.mid", "output": "out/c.wav", "colour": "blue"}"#,
                #"{"input": "corpus/missing.mid", "output": "out/d.wav"}"#,
                #"{"input": "corpus/song0.mid", "output": "out/f.wav", "tail": 0.5, "loudness": -20, "truePeak": -2}"#,
                #"{"input": "corpus/song0.mid", "output": "out/e.wav", "rate": 1000}"#,
                #"{"input": "corpus/song0.mid", "output": "out/a.wav"}"#,
                "",
            ]
            let manifest = directory + "/jobs.jsonl"
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: manifest))
            let result = try runPianola(["render", "--manifest", manifest, "-s", font, "--jobs", "2"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("3 rendered, 0 already done, 5 failed (8 jobs)"), "\(result.stderr)")
            #expect(try wavStats(directory + "/out/a.wav").rate == 44_100)
            #expect(FileManager.default.fileExists(atPath: directory + "/out/b.flac"))
            let failures = jsonLines(directory + "/jobs.failures.jsonl")
            let origins = failures.compactMap { $0["origin"] as? String }.map {
                $0.split(separator: ":").last.map(String.init)
            }
            #expect(Set(origins.compactMap { $0 }) == ["3", "4", "5", "7", "8"], "\(failures)")
            let errors = failures.compactMap { $0["error"] as? String }.joined(separator: " | ")
            #expect(errors.contains("not a JSON object"))
            #expect(errors.contains("unknown key \"colour\""))
            #expect(errors.contains("missing.mid"))
            #expect(errors.contains("rate 1000"))
            #expect(errors.contains("line 1's output too"))
            #expect(jsonLines(directory + "/jobs.done.jsonl").count == 3)  // jobs.done.jsonl, jobs.failures.jsonl
            // The job with its own loudness target: −20 LUFS under −2 dBTP.
            let normalized = try AudioFile.read(from: directory + "/out/f.wav")
            let meter = try LoudnessMeter(channelCount: 2, sampleRate: normalized.sampleRate)
            normalized.samples.withUnsafeBufferPointer { meter.add(interleaved: $0) }
            #expect(abs(meter.integratedLoudness - -20) < 0.5, "\(meter.integratedLoudness) LUFS")
            #expect(meter.truePeak <= -2, "\(meter.truePeak) dBTP")
            // --manifest with file arguments is a usage error.
            #expect(try runPianola(["render", "--manifest", manifest, demoSong]).status != 0)
        }
    }

    @Test(
        "killed (SIGKILL) at random points and rerun, five times: every output complete and right, none rendered twice")
    func resumeAfterKill() throws {
        try withTemporaryFolder("corpus-job") { directory in
            let corpus = try makeCorpus(in: directory, count: 10)
            try FileManager.default.removeItem(atPath: corpus + "/set1/broken.mid")
            let reference = directory + "/reference"
            let arguments = ["--jobs", "2", "-s", font, "--tail", "0.5", "-q"]
            #expect(try runPianola(["render", corpus, "-o", reference] + arguments).status == 0)
            let expected = filesUnder(reference).filter { $0.hasSuffix(".wav") }
            #expect(expected.count == 10)
            var generator = SplitMix(seed: 42)
            var killedMidway = 0
            for attempt in 0..<5 {
                let output = directory + "/run\(attempt)"
                let process = Process()
                process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
                process.arguments = ["render", corpus, "-o", output] + arguments
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(UInt32(150_000 + generator.next() % 1_000_000))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                let recordedAfterKill = jsonLines(output + "/.pianola-done.jsonl").count
                if (1..<10).contains(recordedAfterKill) { killedMidway += 1 }
                let result = try runPianola([
                    "render", corpus, "-o", output, "--jobs", "2", "-s", font, "--tail", "0.5",
                ])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(
                    result.stderr.contains("\(10 - recordedAfterKill) rendered, \(recordedAfterKill) already done"),
                    "attempt \(attempt): \(recordedAfterKill) recorded before the kill; \(result.stderr)")
                for name in expected {
                    let got = FileManager.default.contents(atPath: output + "/" + name)
                    #expect(
                        got == FileManager.default.contents(atPath: reference + "/" + name),
                        "attempt \(attempt): \(name)")
                }
                // One record per output: nothing was rendered twice; no temporary file is left.
                let records = jsonLines(output + "/.pianola-done.jsonl").compactMap { $0["output"] as? String }
                #expect(records.count == 10 && Set(records).count == 10, "attempt \(attempt): \(records.count) records")
                let leftovers = filesUnder(output).filter { $0.contains(".partial-") }
                #expect(leftovers.isEmpty, "attempt \(attempt): \(leftovers)")
            }
            #expect(killedMidway >= 2, "only \(killedMidway) of 5 kills landed in the middle of the batch")
        }
    }

    @Test(
        "killed between giving an output its name and recording it: the rerun knows it for the batch's own, another file is kept"
    )
    func killedBetweenPublishingAndRecording() throws {
        try withTemporaryFolder("corpus-job") { directory in
            let corpus = try makeCorpus(in: directory, count: 2)
            try FileManager.default.removeItem(atPath: corpus + "/set1/broken.mid")
            let output = directory + "/out"
            try FileManager.default.createDirectory(atPath: output + "/set1/deep", withIntermediateDirectories: true)
            // What a render killed there leaves: the output, and its staged name as a second link to
            // it, of a process no longer alive; no ledger line.
            let finished = Process()
            finished.executableURL = URL(fileURLWithPath: "/bin/true")
            try finished.run()
            finished.waitUntilExit()
            let dead = finished.processIdentifier
            let published = output + "/song0.wav"
            let staged = output + "/.song0.wav.partial-\(dead).wav"
            #expect(FileManager.default.createFile(atPath: staged, contents: Data("half a song".utf8)))
            #expect(link(staged, published) == 0)
            // A file of the user's where the other output goes, with no such link: not replaced.
            let users = output + "/set1/deep/song1.wav"
            #expect(FileManager.default.createFile(atPath: users, contents: Data("mine".utf8)))
            let result = try runPianola(["render", corpus, "-o", output, "-s", font, "--tail", "0.5"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("1 rendered, 0 already done, 1 failed (2 jobs)"), "\(result.stderr)")
            #expect(result.stderr.contains("song1.wav exists and was not replaced"), "\(result.stderr)")
            #expect(try wavStats(published).frames > 44_100, "the song, rendered again")
            #expect(FileManager.default.contents(atPath: users) == Data("mine".utf8))
            #expect(!FileManager.default.fileExists(atPath: staged))
            let records = jsonLines(output + "/.pianola-done.jsonl").compactMap { $0["output"] as? String }
            #expect(records.count == 1 && records.first?.hasSuffix("/song0.wav") == true, "\(records)")
            #expect(filesUnder(output).filter { $0.contains(".partial-") }.isEmpty, "\(filesUnder(output))")
        }
    }
}
