import Foundation
import TestSupport
import Testing

@Suite("Shell integration: completions, the man page, `pianola help`", .serialized)
struct ShellIntegrationTests {
    @Test("completion scripts complete MIDI files, SoundFonts, enum values and effect names, in bash, zsh and fish")
    func completions() throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try runPianola(["--generate-completion-script", shell])
            #expect(result.status == 0, "\(shell): \(result.stderr)")
            let script = result.stdout
            for word in ["play", "render", "live", "soundfont", "synth-reverb", "interpolation"] {
                #expect(script.contains(word), "\(shell) completion lacks \(word)")
            }
            #expect(script.contains("sf2") && script.contains("mid"), "\(shell): no file extensions")
            #expect(script.contains("limiter") && script.contains("s24") && script.contains("fluidsynth"), "\(shell)")
        }
    }

    @Test("the man page is generated from the help: every command, its options and examples")
    func manPage() throws {
        let generator = pianolaBinaryDirectory() + "/generate-manual"
        try #require(
            FileManager.default.isExecutableFile(atPath: generator),
            "build it first: swift build --product generate-manual (scripts/test does)")
        try withTemporaryFolder("man") { directory in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: generator)
            process.arguments = [pianolaBinaryDirectory() + "/pianola", "--output-directory", directory]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let page = try String(contentsOfFile: directory + "/pianola.1", encoding: .utf8)
            for text in [
                ".Dt PIANOLA 1", ".It Em play", ".It Em render", ".It Em live", "-soundfont", "pianola render song.mid",
            ] {
                #expect(page.contains(text), "the man page lacks \(text)")
            }
        }
    }
}
