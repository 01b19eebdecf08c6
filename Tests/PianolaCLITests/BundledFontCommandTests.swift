import Foundation
import TestSupport
import Testing

/// Issue 43, points 15 and 16: a copied `pianola` finds the bundled font beside itself (SwiftPM's
/// resource folder), not through the checkout's path; without it, the error lists where it looked
/// and the command adds its own options to the library's words.
///
/// The system's fonts would be found first, so the runs see an empty `/usr/share/sounds` (and
/// the other system font folders) in a mount namespace of their own, as on a machine with no
/// SoundFont installed; `HOME` is an empty folder and `PIANOLA_SOUNDFONT` is unset.
@Suite(
    "A copied pianola finds its bundled font", .serialized,
    .enabled(if: FreshMachine.isAvailable, "needs a mount namespace (`unshare -m`, as root) to hide the system's fonts")
)
struct BundledFontCommandTests {
    @Test("copied with its resource folder, out of the checkout: the font beside it plays; `soundfont` names it")
    func copiedWithResources() throws {
        try withTemporaryFolder("copied-pianola") { folder in
            let binary = try FreshMachine.copyPianola(to: folder + "/bin", withResources: true)
            let shown = try FreshMachine.run(binary, ["soundfont", "--json"], home: folder)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("\"source\":\"bundled\""), "\(shown.stdout)")
            let expected = folder + "/bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2"
            #expect(shown.stdout.contains("\"path\":\"\(expected)\""), "\(shown.stdout)")
            let rendered = try FreshMachine.run(
                binary, ["render", demoSong, "-o", folder + "/out.wav", "--tail", "0"], home: folder)
            #expect(rendered.status == 0, "\(rendered.stderr)")
            #expect(rendered.stderr.contains(expected), "\(rendered.stderr)")
        }
    }

    @Test("installed as PREFIX/bin/pianola with PREFIX/share/pianola/PianolaGM.sf2: found there")
    func installedUnderPrefix() throws {
        try withTemporaryFolder("installed-pianola") { folder in
            let binary = try FreshMachine.copyPianola(to: folder + "/usr/bin", withResources: false)
            try FileManager.default.createDirectory(
                atPath: folder + "/usr/share/pianola", withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: bundledFontPath, toPath: folder + "/usr/share/pianola/PianolaGM.sf2")
            let shown = try FreshMachine.run(binary, ["soundfont", "--json"], home: folder)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("\"path\":\"\(folder)/usr/share/pianola/PianolaGM.sf2\""), "\(shown.stdout)")
        }
    }

    @Test("copied without it: one line listing every place looked in, with the command's options as the way out")
    func copiedWithoutResources() throws {
        try withTemporaryFolder("copied-pianola") { folder in
            let binary = try FreshMachine.copyPianola(to: folder + "/bin", withResources: false)
            let result = try FreshMachine.run(binary, ["soundfont"], home: folder)
            #expect(result.status == 1)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            for place in [
                "$PIANOLA_SOUNDFONT (not set)", "/usr/share/sounds/sf2/default-GM.sf2", "/usr/share/sounds/sf3/",
                folder + "/.local/share/soundfonts/", folder + "/bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2",
                folder + "/bin/PianolaGM.sf2", folder + "/share/pianola/PianolaGM.sf2",
            ] {
                #expect(result.stderr.contains(place), "\(place) not in: \(result.stderr)")
            }
            #expect(
                result.stderr.hasPrefix("pianola: no SoundFont found (looked in ")
                    && result.stderr.hasSuffix(
                        "): pass --soundfont FILE, set PIANOLA_SOUNDFONT, or install fluid-soundfont-gm\n"),
                "\(result.stderr)")
            #expect(!result.stderr.contains("SamplerNode"), "the library's words are replaced by the command's")
            #expect(!result.stderr.contains("/SoundFonts/PianolaGM.sf2"), "no path of the checkout")
        }
    }
}

@Suite("The command puts its options in place of the library's calls")
struct LibraryWordingCommandTests {
    @Test("an unknown effect: `pianola fx list`, not EffectSpec.catalog")
    func unknownEffect() throws {
        try withTemporaryFolder("wording") { folder in
            let result = try runPianola(
                ["render", demoSong, "-o", folder + "/x.wav", "-s", bundledFontPath, "--fx", "chorus"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("; see `pianola fx list`)"), "\(result.stderr)")
            #expect(!result.stderr.contains("EffectSpec.catalog"), "\(result.stderr)")
        }
    }
}

/// Runs a copied `pianola` as on a machine with no SoundFont installed.
enum FreshMachine {
    /// The system's SoundFont folders, hidden (an empty tmpfs each) where they exist.
    static let systemFolders = ["/usr/share/sounds", "/usr/share/soundfonts", "/usr/local/share/soundfonts"]

    /// Whether this process may make a mount namespace.
    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "-m", "sh", "-c", "mount -t tmpfs tmpfs /usr/share/sounds 2>/dev/null || mount -t tmpfs tmpfs /mnt",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Copies the built `pianola` into `folder` (made), with SwiftPM's resource folder beside it
    /// when `withResources`; returns the copy's path.
    static func copyPianola(to folder: String, withResources: Bool) throws -> String {
        let files = FileManager.default
        try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let built = pianolaBinaryDirectory()
        try files.copyItem(atPath: built + "/pianola", toPath: folder + "/pianola")
        if withResources {
            let resources = "Pianola_BundledSoundFont.resources"
            try files.copyItem(atPath: built + "/" + resources, toPath: folder + "/" + resources)
        }
        return folder + "/pianola"
    }

    /// Runs `binary` with `arguments`, the system's font folders empty, `HOME` at `home` and no
    /// `PIANOLA_SOUNDFONT`.
    static func run(
        _ binary: String, _ arguments: [String], home: String
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let hide = systemFolders.map { "if [ -d \($0) ]; then mount -t tmpfs tmpfs \($0) || exit 99; fi" }
        var environment = ProcessInfo.processInfo.environment
        environment["PIANOLA_SOUNDFONT"] = nil
        environment["HOME"] = home
        let result = try runTool(
            "/usr/bin/unshare",
            ["-m", "sh", "-c", (hide + ["exec \"$@\""]).joined(separator: "; "), "sh", binary] + arguments,
            environment: environment)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }
}
