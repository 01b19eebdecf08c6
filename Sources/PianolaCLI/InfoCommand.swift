import ArgumentParser
import FoundationEssentials
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe MIDI files: format, tempo, tracks, notes, and any damage found.",
        usage: "pianola info [<options>] <file> ...",
        discussion: """
            Reads each file leniently, as `play` and `render` do: a damaged file is described with \
            what could be recovered and a list of diagnostics (kind, track, byte offset). Files \
            that hold no MIDI at all are reported as errors.

            Files are read on every core (--jobs) and reported in the order given, each as soon as \
            it and those before it are done; with --json the array is written one object (one line) \
            at a time, so a pipeline can start on the first files while the rest are read.

            Exit status: 0 when every file was read (with or without diagnostics), 1 when any file \
            was rejected.

            Examples:
              pianola info song.mid
              pianola info --json *.mid | jq '.[] | {path, noteCount, durationSeconds}'
              pianola info --strict song.mid     treat any defect as an error
            """)

    @Argument(
        help: ArgumentHelp("MIDI files (.mid, .midi, .kar, .rmi).", valueName: "file"),
        completion: .file(extensions: midiFileExtensions))
    var files: [String]

    @OptionGroup var inputLimit: InputLimitOptions

    @Flag(help: "Print a JSON array with one object per file.")
    var json = false

    @Flag(help: "Reject files with any defect instead of recovering them.")
    var strict = false

    @Flag(name: .shortAndLong, help: "List every diagnostic and every lyric line (text output).")
    var verbose = false

    @Option(help: ArgumentHelp("Read this many files at once (default: one per core).", valueName: "n"))
    var jobs: Int?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, not \(jobs).") }
    }

    func run() throws {
        inputLimit.apply()
        // A file under 1 MB (larger ones are mapped: MIDIFile.withBytes) is read into one
        // short-lived array: glibc would map it and unmap it again for every file, and the kernel
        // zero its pages each time. Kept in the heap, the block is reused; the price is that freed
        // blocks stay resident (up to 256 MB) until the command ends.
        HeapTuning.set(HeapTuning.mmapThreshold, 32 << 20)
        HeapTuning.set(HeapTuning.trimThreshold, 256 << 20)
        let (files, json, strict, verbose) = (files, json, strict, verbose)
        var rejected = 0
        if json { Terminal.writeOutput("[") }
        // More threads than a few per core only costs memory (each has its own stack).
        let cores = min(jobs ?? ProcessInfo.processInfo.activeProcessorCount, 64)
        // Files at once on the cores; the cores left over read the tracks of each file at once.
        let trackThreads = max(1, cores / max(1, min(files.count, cores)))
        forEachInOrder(
            count: files.count, threads: cores,
            work: { index in
                Self.report(
                    path: files[index], first: index == 0, json: json, strict: strict, verbose: verbose,
                    threads: trackThreads)
            },
            deliver: { (index: Int, report: FileReport) in
                if json {
                    Terminal.writeOutput((index == 0 ? "\n" : ",\n") + report.output)
                } else {
                    Terminal.writeOutput(report.output)
                    if let error = report.error { printError(error) }
                }
                if report.error != nil { rejected += 1 }
                // Streamed: a pipeline sees each file's report when it is ready, not when a
                // buffer fills.
                fflush(nil)
            })
        if json { Terminal.writeOutput("\n]\n") }
        if rejected > 0 { throw ExitCode(1) }
    }

    /// Reads one file and makes its report (on a worker thread).
    static func report(
        path: String, first: Bool, json: Bool, strict: Bool, verbose: Bool, threads: Int
    ) -> FileReport {
        let outcome: Result<MIDIFileSummary.ReadResult, MIDIFileError>
        do throws(MIDIFileError) {
            // Summarized as it is read: the events are never kept.
            outcome = .success(try MIDIFileSummary.read(path: path, strict: strict, threads: threads))
        } catch {
            outcome = .failure(error)
        }
        var error: String? = nil
        if case .failure(let failure) = outcome { error = "pianola: \(path): \(Hints.reading(failure.description))" }
        let output =
            json
            ? jsonObject(path: path, outcome: outcome).serialized()
            : (first ? "" : "\n") + text(path: path, outcome: outcome, verbose: verbose)
        return FileReport(output: output, error: error)
    }

    /// What one file's report prints: its text or JSON object, and its rejection for standard error.
    struct FileReport: Sendable {
        var output: String
        var error: String?
    }

    /// The text report of one file, lines ending in newlines.
    static func text(path: String, outcome: Result<MIDIFileSummary.ReadResult, MIDIFileError>, verbose: Bool) -> String
    {
        var out = ""
        func print(_ line: String) { out += line + "\n" }
        print(path)
        let result: MIDIFileSummary.ReadResult
        switch outcome {
        case .failure(let error):
            print("  error: \(Hints.reading(error.description))")
            return out
        case .success(let value):
            result = value
        }
        let summary = result.summary
        let container = result.isRMID ? " (RIFF RMID)" : ""
        print(
            "  format \(summary.format.rawValue)\(container), \(Self.divisionText(summary.division)), \(counted(summary.trackCount, "track")), \(Terminal.clock(summary.durationSeconds))"
        )
        print("  \(counted(summary.noteCount, "note")), \(counted(summary.eventCount, "event"))")
        let tempos = summary.tempoChanges
        let tempoText =
            summary.division.isSMPTE
            ? "none (SMPTE time: ticks are fixed fractions of a second, tempo events do not apply)"
            : Self.tempoText(tempos.map(\.beatsPerMinute))
        var line = "  tempo \(tempoText)"
        if let meter = summary.timeSignatures.first {
            line +=
                ", time \(meter.numerator)/\(meter.denominator)"
                + (summary.timeSignatures.count > 1 ? " (\(counted(summary.timeSignatures.count, "change")))" : "")
        }
        if let key = summary.keySignatures.first { line += ", key \(key.name)" }
        print(line)
        for track in summary.tracks {
            let name = track.name.map { "\"\($0)\"" } ?? "(unnamed)"
            let channels =
                track.channels.isEmpty ? "" : "  ch " + track.channels.map { String($0 + 1) }.joined(separator: ",")
            let programs =
                track.programs.isEmpty
                ? ""
                : "  prog "
                    + track.programs.map {
                        "\($0.program) (\(GeneralMIDI.instrumentName(program: $0.program, channel: $0.channel)))"
                    }.joined(separator: ", ")
            print(
                "    \(Self.pad(String(track.index), 3)) \(name)\(channels)\(programs)  \(counted(track.noteCount, "note"))"
            )
        }
        if summary.lyricCount > 0 || summary.markerCount > 0 {
            print("  \(counted(summary.lyricCount, "lyric")), \(counted(summary.markerCount, "marker"))")
            if verbose { print("  lyrics: " + summary.lyrics.joined()) }
        }
        if result.diagnostics.isEmpty {
            print("  no defects")
        } else {
            print("  \(counted(result.diagnostics.count, "diagnostic")):")
            let shown = verbose ? result.diagnostics : Array(result.diagnostics.prefix(10))
            for diagnostic in shown { print("    \(diagnostic.kind.rawValue): \(diagnostic)") }
            if shown.count < result.diagnostics.count {
                print("    … \(result.diagnostics.count - shown.count) more (--verbose shows all)")
            }
        }
        return out
    }

    static func jsonObject(path: String, outcome: Result<MIDIFileSummary.ReadResult, MIDIFileError>) -> JSONValue {
        var object: [String: JSONValue] = ["path": .string(path)]
        switch outcome {
        case .failure(let error):
            object["error"] = .string(Hints.reading(error.description))
            for key in ["format", "division", "trackCount", "noteCount", "durationSeconds"] { object[key] = .null }
            object["tempoChanges"] = .array([])
            if case .damaged(let diagnostic) = error {
                object["diagnostics"] = .array([diagnosticJSON(diagnostic)])
            } else {
                object["diagnostics"] = .array([])
            }
        case .success(let result):
            let summary = result.summary
            object["error"] = .null
            object["format"] = .number(Double(summary.format.rawValue))
            object["rmid"] = .bool(result.isRMID)
            switch summary.division {
            case .ticksPerQuarterNote(let ticks):
                object["division"] = .object(["ticksPerQuarterNote": .number(Double(ticks))])
            case .smpte(let fps, let ticks):
                object["division"] = .object([
                    "framesPerSecond": .number(Double(fps)), "ticksPerFrame": .number(Double(ticks)),
                ])
            }
            object["trackCount"] = .number(Double(summary.trackCount))
            object["noteCount"] = .number(Double(summary.noteCount))
            object["eventCount"] = .number(Double(summary.eventCount))
            object["durationSeconds"] = .number((summary.durationSeconds * 1000).rounded() / 1000)
            object["lengthInTicks"] = .number(Double(summary.lengthInTicks))
            // SMPTE time has no tempo: its ticks are fixed fractions of a second.
            object["tempoChanges"] = .array(
                (summary.division.isSMPTE ? [] : summary.tempoChanges).map {
                    .object([
                        "tick": .number(Double($0.tick)), "seconds": .number(($0.seconds * 1e6).rounded() / 1e6),
                        "bpm": .number(($0.beatsPerMinute * 1000).rounded() / 1000),
                    ])
                })
            object["timeSignatures"] = .array(
                summary.timeSignatures.map {
                    .object([
                        "tick": .number(Double($0.tick)), "numerator": .number(Double($0.numerator)),
                        "denominator": .number(Double($0.denominator)),
                    ])
                })
            object["keySignatures"] = .array(
                summary.keySignatures.map { .object(["tick": .number(Double($0.tick)), "key": .string($0.name)]) })
            object["tracks"] = .array(
                summary.tracks.map { track in
                    .object([
                        "index": .number(Double(track.index)), "name": track.name.map { .string($0) } ?? .null,
                        "channels": .array(track.channels.map { .number(Double($0 + 1)) }),
                        "programs": .array(
                            track.programs.map {
                                .object([
                                    "channel": .number(Double($0.channel + 1)), "program": .number(Double($0.program)),
                                    "name": .string(
                                        GeneralMIDI.instrumentName(program: $0.program, channel: $0.channel)),
                                ])
                            }),
                        "noteCount": .number(Double(track.noteCount)), "eventCount": .number(Double(track.eventCount)),
                    ])
                })
            object["lyricCount"] = .number(Double(summary.lyricCount))
            object["markerCount"] = .number(Double(summary.markerCount))
            object["diagnostics"] = .array(result.diagnostics.map(diagnosticJSON))
        }
        return .object(object)
    }

    static func diagnosticJSON(_ diagnostic: MIDIFileDiagnostic) -> JSONValue {
        .object([
            "kind": .string(diagnostic.kind.rawValue), "track": diagnostic.track.map { .number(Double($0)) } ?? .null,
            "offset": .number(Double(diagnostic.offset)), "message": .string(diagnostic.message),
        ])
    }

    static func divisionText(_ division: MIDIFile.Division) -> String {
        switch division {
        case .ticksPerQuarterNote(let ticks): return "\(ticks) ticks per quarter note"
        case .smpte(let fps, let ticks): return "SMPTE \(fps == 29 ? "29.97" : String(fps)) fps × \(ticks) ticks"
        }
    }

    /// The tempo map in words: its one tempo, or the first and last with how many there are and
    /// their range.
    static func tempoText(_ tempos: [Double]) -> String {
        // The tempo map always has a first tempo (120 BPM when the file sets none).
        guard let first = tempos.first, let last = tempos.last, let slowest = tempos.min(), let fastest = tempos.max()
        else { return "none" }
        if tempos.count == 1 { return bpm(first) }
        return "\(bpm(first)) → \(bpm(last)), \(counted(tempos.count, "tempo")), \(bpm(slowest))–\(bpm(fastest))"
    }

    static func bpm(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return (rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)) + " BPM"
    }

    static func pad(_ text: String, _ width: Int, _ fill: Character = " ") -> String {
        String(repeating: fill, count: max(0, width - text.count)) + text
    }
}
