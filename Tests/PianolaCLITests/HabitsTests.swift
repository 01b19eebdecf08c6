import Foundation
import TestSupport
import Testing

@Suite("Habits from fluidsynth and timidity: a way in, not a puzzle", .serialized)
struct HabitsTests {
    @Test("pianola -F out.wav font.sf2 song.mid, as fluidsynth takes it: one line with the pianola command, exit 64")
    func fluidSynthCommandLine() throws {
        for (arguments, expected) in [
            (["-F", "out.wav", "font.sf2", "song.mid"], "`pianola render song.mid -s font.sf2 -o out.wav`"),
            (
                ["-ni", "-r", "48000", "--fast-render=o.flac", "a b.sf3", "x.mid", "y.kar"],
                "`pianola render x.mid y.kar -s 'a b.sf3' -o o.flac -r 48000`"
            ),
        ] {
            let result = try runPianola(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && result.stderr.contains("pianola is not fluidsynth"), "\(result.stderr)")
            #expect(result.stderr.contains(expected), "\(result.stderr)")
        }
    }

    @Test("a SoundFont where a MIDI file goes, by name or by its bytes: named with -s before anything renders")
    func soundFontAsSong() throws {
        try withTemporaryFolder("habits") { directory in
            let disguised = directory + "/font.bin"
            try FileManager.default.copyItem(atPath: bundledFontPath, toPath: disguised)
            for (font, command) in [
                (bundledFontPath, ["render", "-o", directory + "/out.wav"]), (disguised, ["play", "-d", "null"]),
            ] {
                let result = try runPianola(command + [font, demoSong])
                #expect(result.status == 64, "\(result.stderr)")
                #expect(result.stderr.contains("\(font) is a SoundFont: give it with -s"), "\(result.stderr)")
                #expect(result.stderr.contains("`pianola \(command[0]) \(demoSong) -s \(font)`"), "\(result.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["font.bin"], "nothing rendered")
        }
    }

    @Test("render without -o: each song's render beside it (song.wav), not replaced without --force, as timidity -Ow")
    func besideTheSong() throws {
        try withTemporaryFolder("habits") { directory in
            for name in ["one.mid", "two.midi"] {
                try FileManager.default.copyItem(atPath: demoSong, toPath: directory + "/" + name)
            }
            let common = ["-s", bundledFontPath, "--tail", "0.1"]
            let first = try runPianola(["render", "-q", directory + "/one.mid"] + common)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(FileManager.default.fileExists(atPath: directory + "/one.wav"))
            let again = try runPianola(["render", "-q", directory + "/one.mid"] + common)
            #expect(again.status == 1 && again.stderr.contains("--force"), "\(again.stderr)")
            let both = try runPianola(
                ["render", "-q", directory + "/one.mid", directory + "/two.midi", "--ext", "flac", "--force"] + common)
            #expect(both.status == 0, "\(both.stderr)")
            for name in ["one.flac", "two.flac"] {
                #expect(FileManager.default.fileExists(atPath: directory + "/" + name))
            }
            let folder = try runPianola(["render", directory] + common)
            #expect(folder.status == 64 && folder.stderr.contains("-o renders/"), "\(folder.stderr)")
            let stems = try runPianola(["render", directory + "/one.mid", "--stems", "track"] + common)
            #expect(stems.status == 64 && stems.stderr.contains("name it with -o"), "\(stems.stderr)")
        }
    }
}
