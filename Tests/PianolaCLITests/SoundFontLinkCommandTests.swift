import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's FluidR3Mono, itself a link into the package's folder.
private let debianFont = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

/// `path` with every symbolic link followed.
private func realPath(_ path: String) throws -> String {
    let resolved = try #require(realpath(path, nil))
    defer { free(resolved) }
    return String(cString: resolved)
}

@Suite("Which font played: a SoundFont given as a symbolic link", .serialized)
struct SoundFontLinkCommandTests {
    @Test("render's summary and --json name the file a link leads to, and the link; soundfont too")
    func linkedFont() throws {
        try #require(FileManager.default.fileExists(atPath: debianFont), "fluidr3mono-gm-soundfont is not installed")
        try withTemporaryFolder("font-link") { folder in
            // A link as Debian's alternatives make them: default-GM.sf3 → the font (→ the package's file).
            let link = folder + "/default-GM.sf3"
            #expect(symlink(debianFont, link) == 0)
            let file = try realPath(debianFont)
            #expect(file != link && file != debianFont)
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)

            let text = try runPianola(["render", song, "-o", folder + "/note.wav", "-s", link, "--tail", "0.2"])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(
                text.stderr.contains("SoundFont: \(file) (from --soundfont, via \(link))\n"), "\(text.stderr)")

            let json = try runPianola([
                "render", song, "-o", folder + "/note.wav", "-s", link, "--tail", "0.2", "--json", "--force",
            ])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect(object["soundFonts"] as? [String] == [file], "\(object)")
            #expect(object["soundFontLinks"] as? [String] == [link], "\(object)")

            // The same font found through PIANOLA_SOUNDFONT, as `soundfont` shows it.
            let environment = ["PIANOLA_SOUNDFONT": link]
            let shown = try runPianola(["soundfont"], environment: environment)
            #expect(
                shown.stdout == "SoundFont: \(file) (from $PIANOLA_SOUNDFONT, via \(link))\n", "\(shown.stdout)")
            let described = try runPianola(["soundfont", "--json"], environment: environment)
            let font = try #require(
                try JSONSerialization.jsonObject(with: Data(described.stdout.utf8)) as? [String: Any])
            #expect(font["path"] as? String == file && font["link"] as? String == link, "\(font)")
            #expect(font["source"] as? String == "environment")
        }
    }

    @Test("a font given as itself has no link: its path as given, soundFontLinks null")
    func plainFont() throws {
        try withTemporaryFolder("font-link") { folder in
            let song = try writeFile(oneNoteSong(), name: "note.mid", in: folder)
            let json = try runPianola([
                "render", song, "-o", folder + "/note.wav", "-s", bundledFontPath, "--tail", "0.2", "--json",
            ])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect(object["soundFonts"] as? [String] == [bundledFontPath])
            #expect(
                (object["soundFontLinks"] as? [Any])?.count == 1 && (object["soundFontLinks"] as? [Any])?[0] is NSNull)
            #expect(json.stderr.contains("SoundFont: \(bundledFontPath) (from --soundfont)\n"), "\(json.stderr)")
        }
    }
}
