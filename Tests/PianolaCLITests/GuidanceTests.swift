import Foundation
import TestSupport
import Testing

@Suite("Mistakes get a way out; help that fits", .serialized)
struct GuidanceTests {
    @Test("a MIDI file given to pianola itself, or a misspelt command, gets the command meant (exit 64)")
    func commandMistakes() throws {
        var result = try runPianola(["song.mid", "--loop"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("did you mean `pianola play song.mid --loop`?"), "\(result.stderr)")
        #expect(result.stderr.contains("pianola render song.mid -o out.wav"))
        result = try runPianola(["rendr", "a.mid"])
        #expect(result.status == 64 && result.stderr.contains("did you mean `pianola render`?"), "\(result.stderr)")
        result = try runPianola(["frobnicate"])
        #expect(result.status == 64 && result.stderr.contains("unknown command 'frobnicate'"))
        #expect(try runPianola(["help", "render"]).stdout.contains("OVERVIEW: Render MIDI files"))
        // `help` with no such command is an error, not the root help (exit 0) as if understood.
        result = try runPianola(["help", "nonexistent"])
        #expect(result.status == 64 && result.stdout.isEmpty, "\(result.stdout.prefix(200))")
        #expect(result.stderr.contains("no command 'nonexistent' to help with"), "\(result.stderr)")
        result = try runPianola(["help", "rendr"])
        #expect(
            result.status == 64 && result.stderr.contains("did you mean `pianola help render`?"), "\(result.stderr)")
    }

    @Test("no sound device: play names `pianola devices`, --device and render; live without a sequencer, --rtpmidi")
    func deviceAndSequencerHints() throws {
        let play = try runPianola(["play", demoSong, "-d", "nosuchdevice", "-s", bundledFontPath])
        #expect(play.status == 1)
        for hint in ["`pianola devices`", "--device", "`pianola render`"] {
            #expect(play.stderr.contains(hint), "\(play.stderr)")
        }
        let live = try runPianola(["live", "-d", "null", "-s", bundledFontPath])
        #expect(live.status == 1 && live.stderr.contains("--rtpmidi PORT"), "\(live.stderr)")
    }

    @Test("libfluidsynth is opened only by commands that synthesize; a missing one is a one-line error")
    func fluidSynthOnDemand() throws {
        // glibc's loader names every library it maps when LD_DEBUG=files.
        let traced = ["LD_DEBUG": "files"]
        let info = try runPianola(["info", demoSong], environment: traced)
        #expect(info.status == 0 && !info.stderr.contains("libfluidsynth"), "\(info.stderr.suffix(2000))")
        let version = try runPianola(["--version"], environment: traced)
        #expect(
            version.stderr.contains("libfluidsynth.so"), "the trace shows no library: \(version.stderr.prefix(500))")

        // --version after a command, as the argument parser answers it: the full text.
        for command in ["info", "render"] {
            let text = try runPianola([command, "--version"]).stdout
            #expect(text.contains("FluidSynth 2.") && text.contains("libsndfile"), "\(command): \(text)")
        }

        let missing = ["PIANOLA_FLUIDSYNTH_LIBRARY": "libpianola-no-such-fluidsynth.so"]
        #expect(try runPianola(["info", demoSong], environment: missing).status == 0)
        #expect(try runPianola(["--version"], environment: missing).stdout.contains("FluidSynth unavailable"))
        try withTemporaryFolder("no-fluidsynth") { directory in
            let render = try runPianola(
                ["render", demoSong, "-o", directory + "/out.wav", "-s", bundledFontPath], environment: missing)
            let lines = render.stderr.split(separator: "\n").filter { $0.hasPrefix("pianola:") }
            #expect(render.status == 1 && lines.count == 1, "\(render.stderr)")
            #expect(
                lines.first?.contains("FluidSynth could not be loaded (libpianola-no-such-fluidsynth.so") == true,
                "\(render.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test(
        "a misspelt option with a value, anywhere on the line, is named with the option meant (exit 64, nothing written)"
    )
    func misspeltOptionWithValue() throws {
        try withTemporaryFolder("guidance") { directory in
            let output = directory + "/out.wav"
            let cases: [([String], String, String)] = [
                (["render", demoSong, "--fromat", "s24", "-o", output], "--fromat", "--format"),
                (["render", demoSong, "-o", output, "--gian", "3"], "--gian", "--gain"),
                (["render", "--gian", "3", demoSong, demoSong, "-o", output], "--gian", "--gain"),
                (["render", demoSong, "--gian=3", "-o", output], "--gian", "--gain"),
                (["play", demoSong, "--gian", "3"], "--gian", "--gain"),
                (["process", demoSong, "--fromat", "s24", "-o", output], "--fromat", "--format"),
                (["info", demoSong, "--jobz", "2"], "--jobz", "--jobs"),
            ]
            for (arguments, wrong, meant) in cases {
                // (A font where the command takes one, so that nothing else could be the complaint.)
                let font = ["render", "play"].contains(arguments[0]) ? ["-s", bundledFontPath] : []
                let result = try runPianola(arguments + font)
                #expect(result.status == 64, "\(arguments): \(result.stderr)")
                #expect(
                    result.stderr.contains("Unknown option '\(wrong)'. Did you mean '\(meant)'?"),
                    "\(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: output))
            }
        }
    }

    @Test("render of several files or a folder into a file name is an error, not a folder called out.wav")
    func manyIntoOneFile() throws {
        try withTemporaryFolder("guidance") { directory in
            for arguments in [[demoSong, demoSong], [checkout + "/Examples"]] {
                let result = try runPianola(
                    ["render"] + arguments + ["-o", directory + "/out.wav", "-s", bundledFontPath])
                #expect(result.status == 64 && result.stderr.contains("names a file"), "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
            }
        }
    }

    @Test("help: the main jobs' examples first, nothing wrapped at 80 columns, every format named, versions")
    func help() throws {
        let root = try runPianola(["--help"]).stdout
        let examples = root.split(separator: "\n").filter { $0.hasPrefix("  pianola ") }.map {
            $0.split(separator: " ")[1]
        }
        #expect(Array(examples.prefix(3)) == ["play", "render", "live"], "\(examples)")
        for command in [
            [], ["play"], ["live"], ["record"], ["render"], ["process"], ["fx"], ["info"], ["devices"], ["soundfont"],
        ] {
            let lines = try runPianola(command + ["--help"]).stdout.split(
                separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated().dropLast() where line.hasPrefix("  pianola ") {
                let next = lines[index + 1]
                #expect(next.isEmpty || next.hasPrefix(" "), "\(command): an example wraps: \(line) | \(next)")
            }
        }
        #expect(root.contains("WAV, FLAC, MP3 or Opus"))
        #expect(try runPianola(["render", "--help"]).stdout.contains("WAV, FLAC, Ogg, Opus, MP3 or AIFF"))
        let version = try runPianola(["--version"]).stdout
        #expect(version.contains("FluidSynth 2.") && version.contains("libsndfile"), "\(version)")
    }
}
