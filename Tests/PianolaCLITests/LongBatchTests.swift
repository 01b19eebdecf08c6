import Foundation
import SoundFontGenerator
import TestSupport
import Testing

/// What a running process holds, read from /proc.
private struct ProcessResources {
    var threads = 0
    var descriptors = 0
    var residentMB = 0.0

    init?(pid: Int32) {
        let files = FileManager.default
        guard let tasks = try? files.contentsOfDirectory(atPath: "/proc/\(pid)/task"),
            let descriptors = try? files.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
            let statm = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return nil }
        threads = tasks.count
        self.descriptors = descriptors.count
        residentMB = pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1e6
    }
}

@Suite("Long batches: one process renders thousands of files with flat resources")
struct LongBatchTests {
    @Test("3 000 files in one render: every one rendered; threads, descriptors and memory stay flat")
    func thousandsOfFiles() throws {
        try withTemporaryFolder("long-batch") { folder in
            // A note of a tenth of a second: the batch's cost is the files, not the music.
            let song: [UInt8] =
                oneNoteSong(ticks: 10)
            let count = 3_000
            var inputs: [String] = []
            for index in 0..<count {
                let path = folder + "/song-\(index).mid"
                try Data(song).write(to: URL(fileURLWithPath: path))
                inputs.append(path)
            }
            // A font of one short sine: the batch's cost is per file, not the font's size.
            var bank = SoundFont2Bank(name: "Sine", comment: "", copyright: "")
            let sine = (0..<800).map { Int16(8_000 * sin(Double($0) * 2 * .pi / 40)) }
            bank.samples = [
                .init(
                    name: "sine", frames: sine, loopStart: 0, loopEnd: 800, sampleRate: 16_000, rootKey: 60,
                    pitchCorrection: 0)
            ]
            bank.instruments = [.init(name: "sine", zones: [.init(generators: [(.sampleModes, 1)], target: 0)])]
            bank.presets = [.init(name: "sine", program: 0, bank: 0, zones: [.init(target: 0)])]
            let font = folder + "/sine.sf2"
            try Data(bank.serialized()).write(to: URL(fileURLWithPath: font))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
            // Before this was mended, each song's preset probe took a thread-local key from the
            // process that was never given back: after about 1 015 files GLib aborted the batch.
            process.arguments =
                ["render"] + inputs + ["-o", folder + "/out", "-s", font, "-r", "8000", "--tail", "0.1", "-q"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            var samples: [ProcessResources] = []
            while process.isRunning {
                if let sample = ProcessResources(pid: process.processIdentifier) { samples.append(sample) }
                usleep(20_000)
            }
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(stderr)")
            let outputs = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/out")) ?? []
            #expect(outputs.filter { $0.hasSuffix(".wav") }.count == count)
            // After the first tenth (loading, the first files): nothing grows.
            try #require(samples.count >= 20, "the batch ran too briefly to be watched")
            let warm = samples[(samples.count / 10)...]
            let early = warm.prefix(warm.count / 4)
            let late = warm.suffix(warm.count / 2)
            #expect(late.map(\.threads).max()! <= early.map(\.threads).max()!, "threads: \(samples.map(\.threads))")
            #expect(
                late.map(\.descriptors).max()! <= early.map(\.descriptors).max()!,
                "descriptors: \(samples.map(\.descriptors))")
            let grown = late.map(\.residentMB).max()! - early.map(\.residentMB).max()!
            #expect(grown < 8, "resident memory grew by \(grown) MB over the batch")
        }
    }
}
