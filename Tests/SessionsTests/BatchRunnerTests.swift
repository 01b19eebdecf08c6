import Foundation
import MIDICore
import PianolaSupport
import SMF
import TestSupport
import Testing

@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

/// A short song (two notes) as SMF bytes; `key` makes songs differ.
private func songBytes(key: UInt8 = 60) throws -> [UInt8] {
    var track = MIDIFile.Track(events: [
        MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: key, velocity: 100))),
        MIDIFile.Event(tick: 240, .channel(.noteOff(channel: 0, note: key, velocity: 0))),
        MIDIFile.Event(tick: 240, .channel(.noteOn(channel: 0, note: key + 4, velocity: 100))),
        MIDIFile.Event(tick: 480, .channel(.noteOff(channel: 0, note: key + 4, velocity: 0))),
    ])
    track.events.append(MIDIFile.Event(tick: 480, .meta(.endOfTrack)))
    return try MIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [track]).serialized()
}

private func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Runs `runner` and returns its summary with the events it reported, checking that every event
/// came on the calling thread.
private func run(_ runner: BatchRunner, workers: Int = 2, cancelled: Bool = false) -> (BatchSummary, [BatchEvent]) {
    var events: [BatchEvent] = []
    let caller = pthread_self()
    var onCaller = true
    let summary = runner.run(workers: workers, isCancelled: { cancelled }) { event in
        onCaller = onCaller && pthread_equal(pthread_self(), caller) != 0
        events.append(event)
    }
    #expect(onCaller, "events came on a worker thread")
    return (summary, events)
}

private func outcomes(_ events: [BatchEvent]) -> [String: String] {
    var result: [String: String] = [:]
    for case .finished(let job, let outcome, _) in events {
        switch outcome {
        case .rendered: result[fileName(job.output)] = "rendered"
        case .skipped: result[fileName(job.output)] = "skipped"
        case .failed(let reason): result[fileName(job.output)] = "failed: " + reason
        case .cancelled: result[fileName(job.output)] = "cancelled"
        }
    }
    return result
}

private func fileName(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

@Suite("Batch runner: one pool for folders, manifests and file lists; resumable through its ledger")
struct BatchRunnerTests {
    /// A folder of three songs and a file that is not MIDI, with a batch over it.
    func corpus(in directory: String) throws -> BatchPlan {
        let folder = directory + "/corpus"
        try FileManager.default.createDirectory(atPath: folder + "/deep", withIntermediateDirectories: true)
        try write(songBytes(key: 60), to: folder + "/a.mid")
        try write(songBytes(key: 62), to: folder + "/b.mid")
        try write(songBytes(key: 64), to: folder + "/deep/c.mid")
        try write(Array("not MIDI".utf8), to: folder + "/deep/broken.mid")
        return BatchPlan(midiFilesUnder: folder, intoFolder: directory + "/out", fileExtension: "wav")
    }

    func configuration(_ directory: String, options: RenderOptions = RenderOptions()) -> BatchRunner.Configuration {
        var options = options
        options.tail = .seconds(0.2)
        var configuration = BatchRunner.Configuration(soundFonts: [bundledFontPath], options: options)
        configuration.ledger = BatchLedger(path: directory + "/ledger.jsonl")
        configuration.failureLog = BatchFailureLog(path: directory + "/failures.jsonl")
        return configuration
    }

    @Test("a rerun skips what its ledger records; a changed input or setting is rendered again; a failure is retried")
    func resumption() throws {
        try withTemporaryFolder("batch") { directory in
            let plan = try corpus(in: directory)
            #expect(plan.jobs.map { fileName($0.output) }.sorted() == ["a.wav", "b.wav", "broken.wav", "c.wav"])

            var (summary, events) = run(BatchRunner(plan, configuration: configuration(directory)))
            #expect((summary.rendered, summary.skipped, summary.failed, summary.total) == (3, 0, 1, 4))
            #expect(outcomes(events)["broken.wav"]?.contains("not a MIDI file") == true)
            #expect(FileManager.default.fileExists(atPath: directory + "/out/deep/c.wav"))
            #expect(BatchLedger(path: directory + "/ledger.jsonl").count == 3)
            let failures = try String(contentsOfFile: directory + "/failures.jsonl", encoding: .utf8)
            #expect(failures.contains("\"origin\":\"deep/broken.mid\""), "\(failures)")

            // Nothing changed: everything recorded is skipped, the broken file is tried again.
            (summary, events) = run(BatchRunner(plan, configuration: configuration(directory)))
            #expect((summary.rendered, summary.skipped, summary.failed) == (0, 3, 1))

            // A changed input, a deleted output: those two again.
            try write(songBytes(key: 70), to: directory + "/corpus/b.mid")
            try FileManager.default.removeItem(atPath: directory + "/out/a.wav")
            (summary, events) = run(BatchRunner(plan, configuration: configuration(directory)))
            #expect(outcomes(events)["a.wav"] == "rendered" && outcomes(events)["b.wav"] == "rendered")
            #expect(outcomes(events)["c.wav"] == "skipped")

            // Another setting shapes every render: all again.
            var louder = RenderOptions()
            louder.gainDecibels = -6
            (summary, events) = run(BatchRunner(plan, configuration: configuration(directory, options: louder)))
            #expect((summary.rendered, summary.skipped) == (3, 0))
        }
    }

    @Test("a ledger line cut short by a crash is ignored, and its output rendered again")
    func truncatedLedger() throws {
        try withTemporaryFolder("batch") { directory in
            let plan = try corpus(in: directory)
            _ = run(BatchRunner(plan, configuration: configuration(directory)))
            let path = directory + "/ledger.jsonl"
            var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            let last = lines.removeLast()
            try (lines.joined(separator: "\n") + "\n" + last.prefix(last.count / 2)).write(
                toFile: path, atomically: false, encoding: .utf8)
            let (summary, _) = run(BatchRunner(plan, configuration: configuration(directory)))
            #expect((summary.rendered, summary.skipped) == (1, 2))
        }
    }

    @Test("a second run of the same runner runs nothing, reports no event and returns the batch's counts")
    func runTwice() throws {
        try withTemporaryFolder("batch") { directory in
            let plan = try corpus(in: directory)
            let runner = BatchRunner(plan, configuration: configuration(directory))
            let (first, events) = run(runner)
            #expect((first.rendered, first.failed, first.finished) == (3, 1, 4))
            #expect(!events.isEmpty)
            let (second, none) = run(runner)
            #expect(none.isEmpty)
            #expect(second == first, "the counts of the run, its time included")
            #expect(BatchLedger(path: directory + "/ledger.jsonl").count == 3, "nothing rendered or recorded again")
        }
    }

    @Test("with every worker thread refused, the jobs run on the calling thread, their events handed over")
    func noWorkerThreads() throws {
        try withTemporaryFolder("batch") { directory in
            let plan = try corpus(in: directory)
            let (summary, events) = SystemThread.$refusesThreads.withValue(true) {
                run(BatchRunner(plan, configuration: configuration(directory)), workers: 3)
            }
            #expect((summary.rendered, summary.failed, summary.finished) == (3, 1, 4))
            #expect(outcomes(events).values.filter { $0 == "rendered" }.count == 3)
        }
    }

    @Test("cancelled before it starts: nothing is rendered or recorded, and the summary says so")
    func cancelled() throws {
        try withTemporaryFolder("batch") { directory in
            let plan = try corpus(in: directory)
            let (summary, _) = run(BatchRunner(plan, configuration: configuration(directory)), cancelled: true)
            #expect(summary.cancelled && summary.rendered == 0)
            #expect(BatchLedger(path: directory + "/ledger.jsonl").count == 0)
        }
    }

    @Test("manifest lines: typed keys and values; a bad line is a problem with its line number, not the batch's end")
    func manifest() throws {
        try withTemporaryFolder("batch") { directory in
            try write(songBytes(), to: directory + "/song.mid")
            let lines = [
                #"{"input": "song.mid", "output": "one.flac", "rate": 48000, "format": "s24", "tail": "auto"}"#,
                #"# a comment"#,
                #"{"input": "song.mid", "output": "two.wav", "tail": 1.5, "gain": -3, "loudness": -20}"#,
                #"not json"#,
                #"{"input": "song.mid"}"#,
                #"{"input": "song.mid", "output": "x.wav", "colour": "red"}"#,
                #"{"input": "song.mid", "output": "one.flac"}"#,
                #"{"input": "song.mid", "output": "y.wav", "rate": "fast"}"#,
                #"{"input": "song.mid", "output": "z.wav", "format": "mp3"}"#,
                #"[1, 2]"#,
            ]
            try lines.joined(separator: "\n").write(toFile: directory + "/m.jsonl", atomically: false, encoding: .utf8)
            let plan = try BatchPlan(manifestAt: directory + "/m.jsonl")
            #expect(plan.jobs.count == 2)
            #expect(plan.jobs[0].output == directory + "/one.flac" && plan.jobs[0].encoding == .s24)
            #expect(plan.jobs[0].sampleRate == 48_000 && plan.jobs[0].tail == .automatic)
            #expect(
                plan.jobs[1].tail == .seconds(1.5) && plan.jobs[1].gainDecibels == -3 && plan.jobs[1].loudness == -20)
            let problems = plan.problems.map { "\(fileName($0.origin)) \($0.reason)" }
            #expect(
                problems == [
                    "m.jsonl:4 not a JSON object", "m.jsonl:5 needs \"input\" and \"output\" strings",
                    "m.jsonl:6 unknown key \"colour\" (keys: engine, format, gain, input, loudness, output, rate, soundfont, tail, truePeak)",
                    "m.jsonl:7 its output is line 1's output too", "m.jsonl:8 \"rate\" must be a number of Hz",
                    "m.jsonl:9 format 'mp3' is not s16, s24 or f32", "m.jsonl:10 not a JSON object",
                ], "\(problems)")
            #expect(throws: BatchError.self) { try BatchPlan(manifestAt: directory + "/none.jsonl") }
        }
    }

    @Test("a folder that cannot be listed is a problem with its path and reason, a failed job, not zero jobs")
    func unlistableFolder() throws {
        try withTemporaryFolder("batch") { directory in
            try write(songBytes(), to: directory + "/song.mid")
            // (Root lists any folder whatever its permission bits: a path through a file fails for anyone.)
            let folder = directory + "/song.mid/corpus"
            let plan = BatchPlan(midiFilesUnder: folder, intoFolder: directory + "/out", fileExtension: "wav")
            #expect(plan.jobs.isEmpty)
            #expect(
                plan.problems == [
                    BatchProblem(
                        origin: folder, input: folder, output: "", reason: "cannot list the folder: Not a directory")
                ], "\(plan.problems)")
            let (summary, events) = run(BatchRunner(plan, configuration: configuration(directory)))
            #expect((summary.failed, summary.total) == (1, 1))
            let failed = events.compactMap { event -> String? in
                guard case .finished(let job, .failed(let reason), _) = event else { return nil }
                return job.input + ": " + reason
            }
            #expect(failed == [folder + ": cannot list the folder: Not a directory"])
            let failures = try String(contentsOfFile: directory + "/failures.jsonl", encoding: .utf8)
            #expect(failures.contains("cannot list the folder"), "\(failures)")
        }
    }

    @Test("a manifest input that is a directory or a device is a problem saying so, with its line")
    func manifestInputOfAnotherKind() throws {
        try withTemporaryFolder("batch") { directory in
            try FileManager.default.createDirectory(
                atPath: directory + "/folder.mid", withIntermediateDirectories: true)
            try write(songBytes(), to: directory + "/song.mid")
            let lines = [
                #"{"input": "folder.mid", "output": "a.wav"}"#, #"{"input": "/dev/null", "output": "b.wav"}"#,
                #"{"input": "song.mid", "output": "c.wav"}"#,
            ]
            try lines.joined(separator: "\n").write(toFile: directory + "/m.jsonl", atomically: false, encoding: .utf8)
            let plan = try BatchPlan(manifestAt: directory + "/m.jsonl")
            #expect(plan.jobs.map(\.output) == [directory + "/c.wav"])
            let problems = plan.problems.map { "\(fileName($0.origin)) \($0.reason)" }
            #expect(
                problems == [
                    "m.jsonl:1 the input \(directory)/folder.mid is a directory, not a MIDI file",
                    "m.jsonl:2 the input /dev/null is a character device, not a MIDI file",
                ], "\(problems)")
        }
    }

    @Test("files into a folder: named after their inputs, a repeated name numbered; kept in the order given")
    func filesIntoFolder() {
        let plan = BatchPlan(
            files: ["x/song.mid", "y/song.kar", "other.mid"], intoFolder: "out/", fileExtension: "flac")
        #expect(plan.jobs.map(\.output) == ["out/song.flac", "out/song-2.flac", "out/other.flac"])
    }
}
