import AudioFiles
import TestSupport
import Testing

@Suite("--end and --duration: an excerpt on render and play", .serialized)
struct ExcerptCommandTests {
    @Test("render --start 2 --end 5 and --start 2 --duration 3 write the same 3 s; play --end plays them")
    func renderAndPlay() throws {
        try withTemporaryFolder("excerpt") { directory in
            let common = [demoSong, "-s", bundledFontPath, "--tail", "0", "--start", "2"]
            for (name, extra) in [("end", ["--end", "5"]), ("duration", ["--duration", "0:03"])] {
                let result = try runPianola(["render", "-q"] + common + extra + ["-o", "\(directory)/\(name).wav"])
                #expect(result.status == 0, "\(result.stderr)")
            }
            let end = try AudioFile.read(from: directory + "/end.wav")
            #expect(try AudioFile.read(from: directory + "/duration.wav").samples == end.samples)
            // (Within two quanta: the music ends in the quantum where the player finishes, and
            // `--tail 0` keeps what the voices' release needs of the next one, as after a whole song.)
            #expect(abs(end.frameCount - 3 * 44_100) <= 1_024, "\(end.frameCount) frames")
            // The excerpt is the full render's frames from 2 s to 5 s (the start is chased exactly).
            let whole = try runPianola(
                ["render", "-q", demoSong, "-s", bundledFontPath, "--start", "2", "-o", directory + "/whole.wav"])
            #expect(whole.status == 0)
            let full = try AudioFile.read(from: directory + "/whole.wav").samples
            let early = 2 * 44_100 * 2
            #expect(Array(full.prefix(early)) == Array(end.samples.prefix(early)), "the first 2 s are the same")

            let drain = PacedDrain(folder: directory, bytesPerSecond: 44_100 * 8 * 8)
            let played = try runPianola([
                "play", demoSong, "-d", drain.device, "-s", bundledFontPath, "--start", "2", "--end", "5",
                "--record-audio", directory + "/heard.wav",
            ])
            #expect(played.status == 0, "\(played.stderr)")
            let heard = try AudioFile.read(from: directory + "/heard.wav")
            let tailed = try runPianola([
                "render", "-q", demoSong, "-s", bundledFontPath, "--start", "2", "--end", "5", "-o",
                directory + "/tailed.wav",
            ])
            #expect(tailed.status == 0)
            let rendered = try AudioFile.read(from: directory + "/tailed.wav")
            let music = 3 * 44_100 * 2
            #expect(heard.samples.count >= music, "\(heard.frameCount) frames heard")
            #expect(Array(heard.samples.prefix(music)) == Array(rendered.samples.prefix(music)))
            #expect(heard.frameCount < 4 * 44_100 + rendered.frameCount, "played as long as the excerpt and its tail")
        }
    }

    @Test("an --end before --start, or --end with --duration, is one line and exit 64")
    func mistakes() throws {
        for (extra, text) in [
            (["--start", "5", "--end", "3"], "--end (0:03.0) must come after --start (0:05.0)"),
            (["--end", "3", "--duration", "2"], "give --end or --duration, not both"),
            (["--duration", "0"], "--duration must be more than 0"),
        ] {
            for command in [["render", "-o", "/nonexistent/x.wav"], ["play", "-d", "null"]] {
                let result = try runPianola(command + [demoSong, "-s", bundledFontPath] + extra)
                #expect(result.status == 64 && result.stderr.contains(text), "\(command) \(extra): \(result.stderr)")
            }
        }
    }
}
