import Foundation
import TestSupport
import Testing

/// A MIDI file that is not there: a command whose options parse goes on to fail on it (exit 1),
/// while an option that does not parse fails first (exit 64).
private let missingSong = "/nonexistent/song.mid"

/// Runs `body` with an output path, in a temporary folder, that no test here expects to be written.
private func withNeverWritten(_ body: (String) throws -> Void) throws {
    try withTemporaryFolder("options") { folder in try body(folder + "/never-written.wav") }
}

@Suite("Options: negative numbers, the same options everywhere, errors before fonts load", .serialized)
struct OptionConventionsTests {
    /// Every numeric option, on every command that has it, with a negative value (a render to `neverWritten`).
    static func numericOptions(neverWritten: String) -> [(command: [String], option: String, accepted: Bool)] {
        let render = ["render", missingSong, "-o", neverWritten]
        let play = ["play", missingSong, "-d", "null"]
        let live = ["live", "-d", "nosuchdevice"]
        var cases: [([String], String, Bool)] = []
        for option in ["--gain", "-g", "--transpose", "--loudness", "--true-peak"] {
            cases.append((render, option, true))
        }
        for option in [
            "--rate", "-r", "--polyphony", "--threads", "--jobs", "-j", "--speed", "--start", "--tail", "--max-length",
        ] {
            cases.append((render, option, false))
        }
        for option in ["--gain", "-g", "--transpose"] { cases.append((play, option, true)) }
        for option in ["--rate", "-r", "--period", "--periods", "--polyphony", "--speed", "--start"] {
            cases.append((play, option, false))
        }
        cases.append((live, "--gain", true))
        for option in ["--rate", "--period", "--periods", "--polyphony", "--delay", "--rtpmidi-timeout", "--rtpmidi"] {
            cases.append((live, option, false))
        }
        return cases
    }

    @Test("every numeric option takes -6 and =-6: accepted where negative values mean something, else its range")
    func negativeNumbers() throws {
        try withNeverWritten { neverWritten in
            for (command, option, accepted) in Self.numericOptions(neverWritten: neverWritten) {
                let forms = option.hasPrefix("--") ? [[option, "-6"], ["\(option)=-6"]] : [[option, "-6"]]
                for form in forms {
                    let result = try runPianola(command + form + ["-s", bundledFontPath])
                    let what = "\((command.prefix(1) + form).joined(separator: " ")): \(result.stderr)"
                    #expect(
                        !result.stderr.contains("Missing value") && !result.stderr.contains("Unknown option"), "\(what)"
                    )
                    if accepted {
                        #expect(result.status == 1, "\(what)")
                    } else {
                        #expect(result.status == 64 && result.stderr.contains("must be"), "\(what)")
                    }
                }
            }
        }
    }

    @Test("the synthesizer's options exist on play, render and live, the song's on play and render, one range each")
    func sameOptionsEverywhere() throws {
        let synth = [
            "--gain", "-g", "--synth-reverb", "--synth-chorus", "--polyphony", "--interpolation", "--program", "--mute",
            "--solo", "--soundfont", "-s", "--fx",
        ]
        for command in ["play", "render", "live"] {
            let help = try runPianola([command, "--help"]).stdout
            for option in synth + (command == "live" ? [] : ["--speed", "--transpose", "--start"]) {
                #expect(help.contains(option), "\(command) --help lacks \(option)")
            }
        }
        // One range each: the same message for the rate on every command.
        try withNeverWritten { neverWritten in
            for command in [["render", missingSong, "-o", neverWritten], ["play", missingSong], ["live"]] {
                let result = try runPianola(command + ["-r", "4000"])
                #expect(result.status == 64 && result.stderr.contains("--rate must be between 8000 and 192000 Hz"))
                let program = try runPianola(command + ["--program", "1:200:3:4"])
                #expect(program.status == 64 && program.stderr.contains("--program must be CHANNEL:[BANK:]PROGRAM"))
                let mute = try runPianola(command + ["--solo", "17"])
                #expect(mute.status == 64 && mute.stderr.contains("--solo must be a MIDI channel, 1…16"))
            }
        }
    }

    @Test("a validation error comes before any SoundFont is looked for or loaded")
    func validationFirst() throws {
        try withNeverWritten { neverWritten in
            let result = try runPianola([
                "render", demoSong, "-o", neverWritten, "-s", "/missing.sf2", "--gain", "99",
            ])
            #expect(
                result.status == 64 && result.stderr.contains("--gain must be between -60 and 40"), "\(result.stderr)")
            #expect(!result.stderr.contains("SoundFont"))
            let fluid = try runPianola([
                "render", demoSong, "-o", neverWritten, "--timing", "fluidsynth", "--speed", "2",
            ])
            #expect(fluid.status == 64 && fluid.stderr.contains("--timing fluidsynth plays from the start at speed 1"))
        }
    }

    @Test("render applies them: gain, speed, start, program overrides, solo and mute, stacked fonts")
    func renderOptions() throws {
        try withTemporaryFolder("options") { directory in
            func render(_ name: String, _ extra: [String], song: String = demoSong) throws -> [Float] {
                let result = try runPianola(
                    ["render", "-q", song, "-o", directory + "/\(name).wav", "--format", "f32", "--tail", "1"]
                        + (extra.contains("-s") ? [] : ["-s", bundledFontPath]) + extra)
                #expect(result.status == 0, "\(name): \(result.stderr)")
                return try readFloatWAV(directory + "/\(name).wav")
            }
            let plain = try render("plain", [])
            let quieter = try render("quieter", ["-g", "-6"])
            let scale = Float(pow(10, -6.0 / 20))
            #expect(zip(plain, quieter).allSatisfy { abs($0 * scale - $1) < 1e-6 })
            // Twice as fast: half the music, the same tail.
            let tail = 44_100.0 * 2
            let plainMusic = Double(plain.count) - tail
            let fasterMusic = Double(try render("faster", ["--speed", "2"]).count) - tail
            #expect(
                abs(fasterMusic - plainMusic / 2) < tail * 0.05,
                "\(fasterMusic) samples of music, \(plainMusic) at speed 1"
            )
            let laterMusic = Double(try render("later", ["--start", "5"]).count) - tail
            #expect(abs(plainMusic - laterMusic - 5 * tail) < tail * 0.05, "\(laterMusic), \(plainMusic)")
            // Solo a channel that plays nothing: silence; mute every channel: silence.
            #expect(try render("solo", ["--solo", "16"]).allSatisfy { abs($0) < 1e-6 })
            let muteAll = (1...16).flatMap { ["--mute", "\($0)"] }
            #expect(try render("muted", muteAll).allSatisfy { abs($0) < 1e-6 })
            #expect(try render("transposed", ["--transpose", "-2"]) != plain)
            // A song that selects program 0 on channel 1, overridden to 40, sounds as the song that
            // selects 40.
            func song(program: UInt8) throws -> String {
                let path = directory + "/program\(program).mid"
                let track: [UInt8] = [
                    0x00, 0xC0, program, 0x00, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00,
                ]
                var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
                bytes += [0, 0, 0, UInt8(track.count)] + track
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                return path
            }
            let overridden = try render("overridden", ["--program", "1:40"], song: try song(program: 0))
            #expect(overridden == (try render("violin", [], song: try song(program: 40))))
            #expect(overridden != (try render("piano", [], song: try song(program: 0))))
            // Stacked fonts: a later font's presets hide an earlier one's.
            let fluid = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"
            if FileManager.default.fileExists(atPath: fluid) {
                let stacked = try render("stacked", ["-s", bundledFontPath, "-s", fluid])
                #expect(stacked == (try render("fluid", ["-s", fluid])))
                #expect(stacked != plain)
                let reversed = try render("reversed", ["-s", fluid, "-s", bundledFontPath])
                #expect(reversed == plain)
            }
        }
    }

    @Test("play applies them as render does: the device gets the samples render writes")
    func playEqualsRenderWithOptions() throws {
        try withTemporaryFolder("options") { directory in
            let raw = directory + "/played.raw"
            let options = [
                "-g", "-3", "--transpose", "2", "--program", "1:40", "--mute", "10", "--interpolation", "7th",
            ]
            var result = try runPianola(
                ["play", demoSong, "-d", "file:FILE=\(raw),FORMAT=raw", "-s", bundledFontPath, "--period", "512"]
                    + options)
            #expect(result.status == 0, "\(result.stderr)")
            result = try runPianola(
                ["render", "-q", demoSong, "-o", directory + "/rendered.wav", "-s", bundledFontPath, "--format", "f32"]
                    + options)
            #expect(result.status == 0, "\(result.stderr)")
            let played = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let rendered = try readFloatWAV(directory + "/rendered.wav")
            let music = 44_100 * 15 * 2
            #expect(played.count >= music && rendered.count >= music)
            let mismatches = zip(played.prefix(music), rendered.prefix(music)).filter { $0 != $1 }.count
            #expect(mismatches == 0, "\(mismatches) samples differ")
        }
    }
}
