import Foundation
import TestSupport
import Testing

/// The project's own font, from this file's location.
private let bundledFont =
    "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/SoundFonts/PianolaGM.sf2"

/// Debian's FluidR3Mono (SoundFont 3: Ogg Vorbis samples).
private let debianFont = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

/// `pianola soundfont --presets` reads the font as the native voice engine does, too.
@Suite("soundfont --presets: the native engine's reading", .serialized)
struct SoundFontNativeCommandTests {
    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test("the bundled font: the native engine reads it, every preset sounds; JSON keeps its keys")
    func bundled() throws {
        let text = try runPianola(["soundfont", "--presets", "-s", bundledFont])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.contains("Native engine: reads it (129 presets, 129 instruments, 227 samples)"), "\(text.stdout)")
        #expect(!text.stdout.contains("Native engine warning"))
        #expect(lines.filter { $0.first?.isNumber == true }.count == 129)

        let described = try runPianola(["soundfont", "--presets", "--json", "-s", bundledFont])
        #expect(described.status == 0)
        let object = try json(described.stdout)
        #expect(Set(object.keys) == ["path", "link", "source", "presets", "warnings", "native"])
        let native = try #require(object["native"] as? [String: Any])
        #expect(native["version"] as? Int == 2 && native["presets"] as? Int == 129)
        #expect(native["instruments"] as? Int == 129 && native["samples"] as? Int == 227)
        #expect((native["silentPresets"] as? [Any])?.isEmpty == true)
        #expect((native["unplayableSamples"] as? [Any])?.isEmpty == true)
        // Without --presets, nothing is read: the output is as before.
        let plain = try runPianola(["soundfont", "--json", "-s", bundledFont])
        #expect(try Set(json(plain.stdout).keys) == ["path", "link", "source"])
    }

    @Test("presets whose samples are all in ROM are warned about: they play silence")
    func romSamples() throws {
        try withTemporaryFolder("native-soundfont") { folder in
            var font = DamagedSoundFont(contentsOf: bundledFont)
            let headers = try #require(font.chunks(inList: "pdta")["shdr"])
            // The first four samples are the piano's ("piano0" … "piano3"), which three presets play.
            for sample in 0..<4 { font.bytes[headers.offset + 8 + sample * 46 + 45] |= 0x80 }
            let path = try font.write("rom.sf2", in: folder)
            let text = try runPianola(["soundfont", "--presets", "-s", path])
            #expect(text.status == 0)
            let warnings = text.stdout.split(separator: "\n").filter { $0.hasPrefix("Native engine warning: ") }
            let first = warnings.first.map(String.init) ?? ""
            #expect(first.hasPrefix("Native engine warning: preset 000:000 Acoustic Grand Pian"), "\(text.stdout)")
            #expect(first.hasSuffix(" plays silence: its sample 'piano0' is in a ROM the file lacks"), "\(first)")
            #expect(warnings.count == 3 && warnings.allSatisfy { $0.contains("plays silence") })
            #expect(text.stdout.contains("4 of them do not play (first: its sample 'piano0' is in a ROM"))

            let object = try json(try runPianola(["soundfont", "--presets", "--json", "-s", path]).stdout)
            let native = try #require(object["native"] as? [String: Any])
            let silent = try #require(native["silentPresets"] as? [[String: Any]])
            #expect(silent.map { $0["program"] as? Int } == [0, 1, 3])
            #expect(silent.allSatisfy { ($0["reason"] as? String)?.contains("ROM") == true })
            #expect((native["unplayableSamples"] as? [Any])?.count == 4)
        }
    }

    @Test(
        "a SoundFont 3 font: the native engine decodes every sample",
        .enabled(if: FileManager.default.fileExists(atPath: debianFont), "fluidr3mono-gm-soundfont is not installed"))
    func soundFont3() throws {
        let text = try runPianola(["soundfont", "--presets", "-s", debianFont])
        #expect(text.status == 0)
        #expect(
            text.stdout.contains(
                "Native engine: reads it (197 presets, 203 instruments, 1037 samples, SF3 samples decodable)"),
            "\(text.stdout)")
        #expect(!text.stdout.contains("Native engine warning"))
    }

    @Test(
        "damaged copies of a Debian font: one line naming the file, exit 1, nothing written",
        .enabled(if: FileManager.default.fileExists(atPath: debianFont), "fluidr3mono-gm-soundfont is not installed"))
    func damagedCopies() throws {
        try withTemporaryFolder("native-soundfont") { folder in
            let whole = DamagedSoundFont(contentsOf: debianFont)
            var cut = whole
            cut.bytes.removeLast(whole.bytes.count / 3)
            var header = whole
            header.bytes.removeLast(whole.bytes.count - 2048)
            // The last "phdr" and "shdr" in the file name the preset and sample headers' chunks
            // (DamagedSoundFont's chunk walk skips pad bytes, which this font lacks).
            func chunk(_ name: String) throws -> Int {
                try #require(
                    (0..<(whole.bytes.count - 4)).reversed().first {
                        whole.bytes[$0..<$0 + 4].elementsEqual(name.utf8)
                    })
            }
            var noHeaders = whole
            let shdr = try chunk("shdr")
            noHeaders.bytes.replaceSubrange(shdr..<shdr + 4, with: Array("shdX".utf8))
            // The second preset's first zone index far past the zones: out of order.
            var scrambled = whole
            let phdr = try chunk("phdr")
            scrambled.bytes[phdr + 8 + 38 + 24] = 0xFF
            scrambled.bytes[phdr + 8 + 38 + 25] = 0xFF
            for (name, font) in [("cut", cut), ("header", header), ("scrambled", scrambled), ("noHeaders", noHeaders)] {
                let path = try font.write(name + ".sf3", in: folder)
                for json in [false, true] {
                    let result = try runPianola(["soundfont", "--presets", "-s", path] + (json ? ["--json"] : []))
                    #expect(result.status == 1, "\(name)")
                    #expect(result.stdout.isEmpty, "\(name): \(result.stdout)")
                    #expect(result.stderr.hasPrefix("pianola: \(path): "), "\(name): \(result.stderr)")
                    #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(name): \(result.stderr)")
                }
            }
        }
    }
}
