import Foundation
import TestSupport
import Testing

/// Runs the built `pianola` (next to this test bundle) and returns its exit status and output.
func runPianola(
    _ arguments: [String], environment: [String: String] = [:]
) throws -> (status: Int32, stdout: String, stderr: String) {
    let result = try runTool(
        pianolaBinaryDirectory() + "/pianola", arguments,
        environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
}

@Suite("pianola command line", .serialized)
struct CLITests {
    @Test("--help teaches the SoundFont search order and lists subcommands")
    func help() throws {
        let result = try runPianola(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("PIANOLA_SOUNDFONT"))
        #expect(result.stdout.contains("soundfont"))
    }

    @Test("soundfont --json reports the font named by PIANOLA_SOUNDFONT")
    func soundfontJSON() throws {
        let fontPath = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let font = "/" + fontPath + "/SoundFonts/PianolaGM.sf2"
        let result = try runPianola(["soundfont", "--json"], environment: ["PIANOLA_SOUNDFONT": font])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"source\":\"environment\""))
        #expect(result.stdout.contains("PianolaGM.sf2"))
    }

    @Test("soundfont --presets lists 129 presets of the bundled font")
    func presets() throws {
        let fontPath =
            "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/SoundFonts/PianolaGM.sf2"
        let result = try runPianola(["soundfont", "--presets", "-s", fontPath])
        #expect(result.status == 0)
        #expect(
            result.stdout.split(separator: "\n").filter { $0.contains(":") && $0.first?.isNumber == true }.count == 129)
        #expect(result.stdout.contains("128:000  Standard Kit"))
    }

    @Test("a missing SoundFont is one clear line and exit status 1")
    func missingFont() throws {
        let result = try runPianola(["soundfont", "-s", "/no/such/font.sf2"])
        #expect(result.status == 1)
        #expect(result.stderr == "pianola: SoundFont not found: /no/such/font.sf2\n")
    }
}
