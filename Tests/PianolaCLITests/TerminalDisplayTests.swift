import Foundation
import SMF
import TestSupport
import Testing

/// Runs pianola on a pseudo-terminal `columns` wide (util-linux `script`): what the terminal
/// received, and the wall-clock seconds it took.
private func runOnTerminal(_ arguments: [String], columns: Int) throws -> (output: String, seconds: Double) {
    let command = ([pianolaBinaryDirectory() + "/pianola"] + arguments).map { "'\($0)'" }.joined(separator: " ")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qfec", "stty cols \(columns) rows 24; \(command)", "/dev/null"]
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = FileHandle.nullDevice
    let started = Date()
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (String(decoding: data, as: UTF8.self), Date().timeIntervalSince(started))
}

/// The pieces a terminal shows one after the other on one line (split at carriage returns),
/// without the clear-to-end escape.
private func redraws(_ output: String) -> [String] {
    output.split(separator: "\r").map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }.filter { !$0.isEmpty }
}

@Suite("What a terminal shows: progress and status lines", .serialized)
struct TerminalDisplayTests {
    @Test("render's progress never passes the total in the tail, fits the terminal, redraws ≤ 10 times a second")
    func renderProgress() throws {
        try withTemporaryFolder("terminal") { directory in
            let (output, seconds) = try runOnTerminal(
                ["render", demoSong, "-o", directory + "/out.wav", "--tail", "30", "-s", bundledFontPath], columns: 60)
            let bars = redraws(output).filter { $0.contains("%") && $0.hasPrefix("demo-song.mid") }
            #expect(!bars.isEmpty, "\(output)")
            #expect(Double(bars.count) <= seconds * 10 + 2, "\(bars.count) redraws in \(seconds) s")
            let clock = /(\d+):(\d+\.\d)\/(\d+):(\d+\.\d)/
            for bar in bars {
                #expect(bar.count <= 59, "\(bar.count) columns: \(bar)")
                guard let match = bar.firstMatch(of: clock) else { continue }
                let position = Double(match.1)! * 60 + Double(match.2)!
                let total = Double(match.3)! * 60 + Double(match.4)!
                #expect(position <= total, "\(bar)")
            }
            #expect(bars.contains { $0.contains("+ tail") })
        }
    }

    @Test("play's status line fits the terminal: a long lyric line scrolls instead of growing")
    func playStatusFits() throws {
        try withTemporaryFolder("terminal") { directory in
            var events: [MIDIFile.Event] = []
            for index in 0..<120 {
                let tick = index * 480
                events.append(MIDIFile.Event(tick: tick, .meta(.text(.lyric, Array("la\(index)".utf8)))))
                events.append(MIDIFile.Event(tick: tick, .channel(.noteOn(channel: 0, note: 60, velocity: 90))))
                events.append(MIDIFile.Event(tick: tick + 400, .channel(.noteOff(channel: 0, note: 60, velocity: 0))))
            }
            events.append(MIDIFile.Event(tick: 120 * 480, .meta(.endOfTrack)))
            let song = directory + "/lyrics.mid"
            try MIDIFile(format: .singleTrack, tracks: [MIDIFile.Track(events: events)]).write(to: song)
            let (output, _) = try runOnTerminal(["play", song, "-d", "null", "-s", bundledFontPath], columns: 100)
            let lines = redraws(output).filter { $0.hasPrefix("▶") || $0.hasPrefix("⏸") }
            #expect(!lines.isEmpty, "\(output)")
            for line in lines { #expect(line.count <= 99, "\(line.count) columns: \(line)") }
            #expect(lines.contains { $0.contains("…") && $0.contains("la") }, "no scrolled lyric: \(lines.last ?? "")")
        }
    }
}
