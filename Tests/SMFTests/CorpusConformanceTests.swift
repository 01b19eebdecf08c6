import Foundation
import MIDICore
import TestSupport
import Testing

@testable import SMF

#if canImport(Glibc)
    import Glibc
#endif

let corpusPresent = isDirectory(corpusRoot)

/// What each jazz-soft file's own text says a lenient player gives (see its README): notes, and
/// whether the file is flawed ("Most players consider it invalid") or rejected outright.
enum JazzSoftExpectation {
    case notes(Int, flawed: Bool)
    case rejected
}

let jazzSoftExpectations: [String: JazzSoftExpectation] = {
    var table: [String: JazzSoftExpectation] = [:]
    let scaleFiles = [
        "test-c-major-scale", "test-vlq-2-byte", "test-vlq-3-byte", "test-vlq-4-byte", "test-rpn-00-02-coarse-tuning",
        "test-sysex-7f-04-04-master-coarse-tuning", "test-control-00-20-bank-select", "test-control-40-damper",
        "test-control-41-portamento", "test-smpte-offset",
    ]
    for name in scaleFiles { table[name] = .notes(8, flawed: false) }
    for name in [
        "test-corrupt-file-extra-byte", "test-corrupt-file-missing-byte", "test-non-midi-track",
        "test-running-status-metaevent", "test-running-status-sysex",
    ] {
        table[name] = .notes(8, flawed: true)
    }
    for suffix in ["all", "f1-xx", "f2-xx-xx", "f3-xx", "f4", "f5", "f6", "f8", "f9", "fa", "fb", "fc", "fd", "fe"] {
        table["test-illegal-message-" + suffix] = .notes(8, flawed: true)
    }
    table["test-2-tracks-type-0"] = .notes(16, flawed: true)  // "two tracks instead of one ... technically invalid"
    table["test-2-tracks-type-1"] = .notes(16, flawed: false)
    table["test-2-tracks-type-2"] = .notes(16, flawed: false)
    for index in 0...3 { table["test-multichannel-chords-\(index)"] = .notes(24, flawed: false) }
    table["test-note-on-velocity"] = .notes(9, flawed: false)  // C5 at velocities 1, 16, 32 … 127
    table["test-track-length"] = .notes(1, flawed: false)
    for name in [
        "test-silence-end-of-track", "test-silence-text-metaevent", "test-silence-all-notes-off", "test-empty",
    ] {
        table[name] = .notes(0, flawed: false)
    }
    table["test-empty-file"] = .rejected
    table["test-not-a-midi-file"] = .rejected
    return table
}()

@Suite(
    "Conformance over the shared MIDI corpus",
    .enabled(if: corpusPresent, "shared corpus not found at \(corpusRoot): skipped"))
struct CorpusConformanceTests {
    @Test("jazz-soft: every file gives what its own text says a lenient player should give", .timeLimit(.minutes(1)))
    func jazzSoft() throws {
        let files = corpusFiles(corpusRoot + "/jazz-soft-test-midi-files")
        #expect(files.count == 72)
        var rows: [(String, String, String)] = []
        for path in files {
            let name = String(path.split(separator: "/").last!.dropLast(4))
            let outcome: Result<MIDIFile.ReadResult, MIDIFileError>
            do { outcome = .success(try MIDIFile.read(path: path)) } catch { outcome = .failure(error) }
            switch (jazzSoftExpectations[name], outcome) {
            case (.rejected?, .failure(let error)):
                rows.append((name, "rejected", "\(error)"))
                guard case .notMIDI = error else { Issue.record("\(name): wrong error \(error)"); continue }
            case (.rejected?, .success):
                Issue.record("\(name) should be rejected")
            case (_, .failure(let error)):
                Issue.record("\(name) rejected: \(error)")
            case (.notes(let count, let flawed)?, .success(let result)):
                #expect(result.file.noteCount == count, "\(name)")
                #expect(result.diagnostics.isEmpty != flawed, "\(name): \(result.diagnostics)")
                rows.append(
                    (
                        name, "\(result.file.noteCount) notes",
                        result.diagnostics.map(\.kind.rawValue).joined(separator: ",")
                    ))
            case (nil, .success(let result)):
                // Content tests (programs, controllers, SysEx): valid files that must read cleanly.
                #expect(result.diagnostics.isEmpty, "\(name): \(result.diagnostics)")
                rows.append((name, "\(result.file.noteCount) notes", ""))
            }
        }
        // Details the texts promise.
        let silence = try MIDIFile.read(path: corpusRoot + "/jazz-soft-test-midi-files/test-silence-end-of-track.mid")
            .file
        #expect(abs(silence.durationSeconds - 5) < 0.01, "End of Track after 5 s: \(silence.durationSeconds)")
        let trackLength = try MIDIFile.read(path: corpusRoot + "/jazz-soft-test-midi-files/test-track-length.mid").file
        let note = trackLength.tracks.flatMap { $0.notes() }[0]
        #expect(trackLength.lengthInTicks > note.endTick, "the track goes on after the note")
        let velocities = try MIDIFile.read(path: corpusRoot + "/jazz-soft-test-midi-files/test-note-on-velocity.mid")
            .file.tracks.flatMap { $0.notes() }
        #expect(velocities.map(\.velocity) == [1, 16, 32, 48, 64, 80, 96, 112, 127])
        let smpte = try MIDIFile.read(path: corpusRoot + "/jazz-soft-test-midi-files/test-smpte-offset.mid").file
        #expect(
            smpte.tracks.flatMap(\.events).contains {
                if case .meta(.smpteOffset(_, 1, 0, _, _)) = $0.payload { return true } else { return false }
            })
        let karaoke = try MIDIFile.read(path: corpusRoot + "/jazz-soft-test-midi-files/test-karaoke-kar.mid").file
        #expect(MIDIFileSummary(karaoke).lyricCount > 20)
        printTable("jazz-soft", rows)
    }

    @Test(
        "midly: valid files parse with no diagnostics; the damaged ones are recovered with diagnostics",
        .timeLimit(.minutes(1)))
    func midly() throws {
        // Damaged on purpose (see the corpus README): a truncated file, a short Time Signature,
        // and a SysEx test whose third track has no End of Track.
        let damaged: [String: (notes: Int?, kinds: Set<MIDIFileDiagnostic.Kind>)] = [
            "PiDamaged.mid": (nil, [.trackLengthTooLong, .truncatedEvent, .missingEndOfTrack, .trackCountMismatch]),
            "Levels.mid": (280, [.invalidMetaEventLength]),
            "SysExTest.mid": (0, [.missingEndOfTrack]),
        ]
        let expectedNotes = [
            "Clementi.mid": 666, "ClementiRewritten.mid": 666, "Sandstorm.mid": 12_537, "CrabRave.mid": 6_793,
            "RiverFlowsInYou.mid": 800,
        ]
        var rows: [(String, String, String)] = []
        let files = corpusFiles(corpusRoot + "/midly-test-asset")
        #expect(files.count == 9)
        for path in files {
            let name = String(path.split(separator: "/").last!)
            let result = try MIDIFile.read(path: path)
            rows.append(
                (
                    name, "\(result.file.noteCount) notes",
                    Set(result.diagnostics.map(\.kind.rawValue)).sorted().joined(separator: ",")
                ))
            if let expectation = damaged[name] {
                #expect(Set(result.diagnostics.map(\.kind)) == expectation.kinds, "\(name)")
                if let notes = expectation.notes { #expect(result.file.noteCount == notes, "\(name)") }
                #expect(result.file.noteCount > 0 || name == "SysExTest.mid")
            } else {
                #expect(result.diagnostics.isEmpty, "\(name): \(result.diagnostics)")
                if let notes = expectedNotes[name] { #expect(result.file.noteCount == notes, "\(name)") }
                // Valid files write back and read the same.
                #expect(try MIDIFile.read(bytes: result.file.serialized()).file == result.file, "\(name)")
            }
        }
        let beethoven = try MIDIFile.read(path: corpusRoot + "/midly-test-asset/Beethoven.rmi")
        #expect(beethoven.isRMID)
        // midly's rewrite of Clementi is byte-identical to the original; so is ours.
        let clementi = try MIDIFile.readBytes(path: corpusRoot + "/midly-test-asset/Clementi.mid")
        #expect(try MIDIFile.read(bytes: clementi).file.serialized() == clementi)
        printTable("midly", rows)
    }

    @Test(
        "DryWetMIDI valid files: no diagnostics, the format of their folder, and a lossless round trip",
        .timeLimit(.minutes(2)))
    func dryWetValid() throws {
        let files = corpusFiles(corpusRoot + "/drywetmidi/Valid")
        #expect(files.count == 63)
        var events = 0
        for path in files {
            let result = try MIDIFile.read(path: path)
            #expect(result.diagnostics.isEmpty, "\(path): \(result.diagnostics)")
            let expectedFormat: MIDIFile.Format? =
                path.contains("/SingleTrack/")
                ? .singleTrack
                : path.contains("/MultiTrack/") ? .multiTrack : path.contains("/MultiSequence/") ? .multiSequence : nil
            if let expectedFormat { #expect(result.file.format == expectedFormat, "\(path)") }
            #expect(try MIDIFile.read(bytes: result.file.serialized()).file == result.file, "\(path)")
            #expect(
                try MIDIFile.read(bytes: result.file.serialized(runningStatus: false)).file == result.file, "\(path)")
            events += result.file.tracks.reduce(0) { $0 + $1.events.count }
        }
        printTable("DryWetMIDI valid", [("\(files.count) files", "\(events) events", "all clean, all round-trip")])
    }

    @Test(
        "DryWetMIDI invalid files: parsed with diagnostics or rejected with a typed error, never a crash",
        .timeLimit(.minutes(2)))
    func dryWetInvalid() throws {
        let root = corpusRoot + "/drywetmidi/Invalid"
        let files = corpusFiles(root)
        #expect(files.count >= 250)
        var perFolder: [String: (diagnosed: Int, rejected: Int, rmid: Int, notes: Int)] = [:]
        for path in files {
            let folder = String(path.dropFirst(root.count + 1).split(separator: "/").first!)
            var row = perFolder[folder] ?? (0, 0, 0, 0)
            do {
                let result = try MIDIFile.read(path: path)
                if result.isRMID && result.diagnostics.isEmpty {
                    // Valid RIFF RMID files that DryWetMIDI itself cannot unwrap.
                    row.rmid += 1
                } else {
                    #expect(!result.diagnostics.isEmpty, "\(path) parsed with no diagnostic")
                    row.diagnosed += 1
                }
                row.notes += result.file.noteCount
                #expect(try MIDIFile.read(bytes: result.file.serialized()).file == result.file, "\(path)")
            } catch {
                row.rejected += 1
            }
            perFolder[folder] = row
        }
        #expect(perFolder["No Header Chunk"]?.rejected == 12)
        #expect(perFolder["Not Enough Bytes"]?.rmid == 6)
        printTable(
            "DryWetMIDI invalid (folder: diagnosed / rejected / valid RMID, notes recovered)",
            perFolder.keys.sorted().map { key in
                let row = perFolder[key]!
                return (key, "\(row.diagnosed) / \(row.rejected) / \(row.rmid)", "\(row.notes) notes")
            })
    }
}

func printTable(_ title: String, _ rows: [(String, String, String)]) {
    let width = rows.map(\.0.count).max() ?? 0
    print("── \(title) ──")
    for row in rows {
        print(
            "  " + row.0 + String(repeating: " ", count: width - row.0.count) + "  " + row.1
                + (row.2.isEmpty ? "" : "  [" + row.2 + "]"))
    }
}

extension CorpusConformanceTests {
    @Test(
        "every corpus file: summarizing while reading gives the summary of the file read, lenient and strict",
        .timeLimit(.minutes(2)))
    func summaryReadOverCorpus() throws {
        // Every file, READMEs included: bytes that hold no MIDI must be refused the same way.
        let files = corpusFiles(corpusRoot, extensions: [""])
        #expect(files.count >= 390)
        for path in files {
            // Raw bytes: reading from a path refuses what is not MIDI before the rest is read.
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            expectSummaryReadMatches(bytes, path)
            expectSummaryReadMatches(bytes, strict: true, path)
        }
    }
}
