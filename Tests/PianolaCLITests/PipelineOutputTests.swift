import Foundation
import TestSupport
import Testing

/// The lines of `text` (without the empty one after the last newline).
private func lines(_ text: String) -> [Substring] {
    text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0).map { $0 }
}

/// The subcommands a help text lists (the first word of each entry under SUBCOMMANDS).
private func subcommands(inHelp help: String) -> [String] {
    var names: [String] = []
    var inSection = false
    for line in lines(help) {
        if line == "SUBCOMMANDS:" {
            inSection = true
        } else if inSection {
            if line.isEmpty { break }
            // An entry starts two spaces in; a wrapped description further in.
            if line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first {
                names.append(String(name))
            }
        }
    }
    return names
}

@Suite("Output that reads well in a pipeline: no progress, counts agree, 80 columns", .serialized)
struct PipelineOutputTests {
    @Test("a render into a pipe writes no progress: standard error has the font's line, standard output the summary")
    func renderWritesNoProgressIntoAPipe() throws {
        try withTemporaryFolder("pipeline") { folder in
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)
            let result = try runPianola(["render", song, "-o", folder + "/note.wav", "-s", bundledFontPath])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(lines(result.stderr) == ["SoundFont: \(bundledFontPath) (from --soundfont)"], "\(result.stderr)")
            #expect(lines(result.stdout).count == 1 && result.stdout.hasPrefix(folder + "/note.wav: "))

            // Stems, several files at once, a folder: no progress either; summaries alone on standard output.
            let stems = try runPianola([
                "render", song, "-o", folder + "/stems", "--stems", "channel", "-s", bundledFontPath,
            ])
            #expect(stems.status == 0 && lines(stems.stderr).count == 1, "\(stems.stderr)")
            #expect(
                stems.stdout.contains("1 stem by channel + mix") && stems.stdout.contains("1 note,"), "\(stems.stdout)")

            let copy = try writeFile(oneNoteSong(ticks: 48), name: "short.mid", in: folder)
            let batch = try runPianola([
                "render", song, copy, "-o", folder + "/batch", "--jobs", "2", "-s", bundledFontPath,
            ])
            #expect(batch.status == 0 && lines(batch.stderr).count == 1, "\(batch.stderr)")
            let outputs = lines(batch.stdout)
            #expect(outputs.count == 2, "\(batch.stdout)")
            #expect(outputs.allSatisfy { $0.hasPrefix(folder + "/batch/") }, "progress on standard output: \(outputs)")

            let corpus = folder + "/corpus"
            try FileManager.default.createDirectory(atPath: corpus, withIntermediateDirectories: true)
            _ = try writeFile(oneNoteSong(), name: "only.mid", in: corpus)
            let tree = try runPianola(["render", corpus, "-o", folder + "/renders", "-s", bundledFontPath])
            #expect(tree.status == 0 && tree.stdout.isEmpty, "\(tree.stdout)")
            let told = lines(tree.stderr)
            #expect(told.count == 2 && told[1].hasPrefix("1 rendered, 0 already done, 0 failed (1 job): "), "\(told)")
        }
    }

    @Test("process: no progress into a pipe; its summary has peak and loudness, and says \"1 effect\"")
    func processSummary() throws {
        try withTemporaryFolder("pipeline") { folder in
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)
            let input = folder + "/note.wav"
            #expect(try runPianola(["render", "-q", song, "-o", input, "-s", bundledFontPath]).status == 0)
            let result = try runPianola(["process", input, "-o", folder + "/eq.wav", "--fx", "eq:gain=3"])
            #expect(result.status == 0, "\(result.stderr)")
            let told = lines(result.stderr)
            #expect(told.count == 1, "\(result.stderr)")
            let summary = try #require(told.first)
            #expect(summary.hasPrefix(folder + "/eq.wav: ") && summary.contains(", 1 effect, s16, "), "\(summary)")
            let peak = try #require(summary.firstMatch(of: /peak (-?\d+\.\d) dBFS, (-?\d+\.\d) LUFS/), "\(summary)")
            // The file's own peak, as the summary rounds it.
            let (_, _, filePeak) = try wavStats(folder + "/eq.wav")
            #expect(abs(Double(peak.1)! - 20 * log10(filePeak)) <= 0.1, "\(summary): the file peaks at \(filePeak)")
            #expect(Double(peak.2)! < 0)
        }
    }

    @Test("play into a pipe: no line every tenth, only the song's end")
    func playWritesNoProgressIntoAPipe() throws {
        try withTemporaryFolder("pipeline") { folder in
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)
            let result = try runPianola(["play", song, "-d", "null", "-s", bundledFontPath])
            #expect(result.status == 0, "\(result.stderr)")
            let told = lines(result.stderr)
            #expect(!told.contains { $0.hasPrefix("note.mid: 0:") }, "progress into a pipe: \(told)")
            #expect(told.last?.hasPrefix("note.mid: finished, ") == true, "\(told)")
        }
    }

    @Test("record into a pipe: no status line every 10 seconds, only the summary")
    func recordWritesNoStatusIntoAPipe() throws {
        try withTemporaryFolder("pipeline") { folder in
            // (Eleven seconds: a status line was due after ten.)
            let result = try runPianola([
                "record", "-o", folder + "/take.wav", "-d", "null", "--duration", "11", "--period", "4096", "--periods",
                "4",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let told = lines(result.stderr)
            #expect(
                !told.contains { $0.contains(#/^\d+:\d\d\.\d (recorded|paused)  /#) }, "status into a pipe: \(told)")
            #expect(told.contains { $0.hasPrefix("Recorded 0:11.0 to \(folder)/take.wav") }, "\(told)")
        }
    }

    @Test("every command's --help, and fx list, fit in 80 columns")
    func helpFitsEightyColumns() throws {
        var commands: [[String]] = [[]]
        var checked: [String] = []
        while let command = commands.popLast() {
            let result = try runPianola(command + ["--help"], environment: ["COLUMNS": "80"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            for line in lines(result.stdout) {
                #expect(
                    line.count <= 80, "pianola \(command.joined(separator: " ")) --help: \(line.count) columns: \(line)"
                )
            }
            checked.append(command.joined(separator: " "))
            commands += subcommands(inHelp: result.stdout).map { command + [$0] }
        }
        #expect(
            Set(["", "play", "render", "process", "info", "fx", "fx list", "soundfont"]).isSubset(of: checked),
            "\(checked)")
        let list = try runPianola(["fx", "list"])
        #expect(list.status == 0 && lines(list.stdout).count > 40)
        for line in lines(list.stdout) { #expect(line.count <= 80, "fx list: \(line.count) columns: \(line)") }
    }

    @Test("counts agree in number: \"1 track\", \"1 note\" in info")
    func infoCountsAgree() throws {
        try withTemporaryFolder("pipeline") { folder in
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)
            let result = try runPianola(["info", song])
            #expect(result.stdout.contains(", 1 track, ") && result.stdout.contains("  1 note, "), "\(result.stdout)")
            #expect(result.stdout.contains("(unnamed)  ch 1  1 note\n"), "\(result.stdout)")
        }
    }
}
