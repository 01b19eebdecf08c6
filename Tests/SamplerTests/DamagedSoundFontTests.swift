import Foundation
import TestSupport
import Testing

@testable import Sampler

@Suite("Damaged SoundFonts: one line naming the first real problem, warnings for silent samples")
struct DamagedSoundFontTests {
    func refusal(_ font: DamagedSoundFont, _ name: String) throws -> String {
        try withTemporaryFolder("damaged-font") { folder in
            let path = try font.write(name, in: folder)
            do {
                try SamplerNode().loadSoundFont(at: path)
                Issue.record("\(name) loaded")
                return ""
            } catch {
                let text = "\(error)"
                #expect(text.hasPrefix(path), "\(text)")
                #expect(!text.contains("\n") && !text.contains("DLS") && text.count < 300, "\(text)")
                #expect(
                    !text.unicodeScalars.contains { $0.value < 32 }, "no raw control bytes: \(text.debugDescription)")
                return text
            }
        }
    }

    @Test("a font cut short, a chunk of the wrong size, a missing chunk: refused before FluidSynth reads them")
    func structure() throws {
        let original = DamagedSoundFont(contentsOf: bundledFont)
        #expect(original.bytes.count > 100_000)
        var cut = original
        cut.bytes.removeLast(original.bytes.count * 4 / 10)
        let refusedCut = try refusal(cut, "cut.sf2")
        #expect(refusedCut.contains("no preset data") && refusedCut.contains("cut short"), "\(refusedCut)")

        var sizes = original
        let shdr = original.chunks(inList: "pdta")["shdr"]!
        sizes.put32(shdr.size - 1, at: shdr.offset + 4)
        #expect(try refusal(sizes, "shdr.sf2").contains("'shdr' chunk holds \(shdr.size - 1) bytes"))

        var renamed = original
        let igen = original.chunks(inList: "pdta")["igen"]!
        renamed.bytes.replaceSubrange(igen.offset..<igen.offset + 4, with: Array("xg\u{1}n".utf8))
        #expect(try refusal(renamed, "igen.sf2").contains("no 'igen' chunk"))
    }

    @Test("a font FluidSynth refuses: its first error, without the DLS loader's noise or GLib's lines")
    func fluidSynthRefusal() throws {
        var bags = DamagedSoundFont(contentsOf: bundledFont)
        bags.scrambleBagIndices()
        let text = try refusal(bags, "bags.sf2")
        #expect(text.contains("FluidSynth could not load it: Preset header indices not monotonic"), "\(text)")
    }

    @Test("a font whose sample data is cut short loads, with a warning that those samples play silence")
    func samplesCutShort() throws {
        var font = DamagedSoundFont(contentsOf: bundledFont)
        let sdta = font.chunks()["sdta"]!
        let smpl = font.chunks(inList: "sdta")["smpl"]!
        let kept = smpl.size / 2
        font.bytes.removeSubrange((smpl.offset + 8 + kept)..<(smpl.offset + 8 + smpl.size))
        font.put32(kept, at: smpl.offset + 4)
        font.put32(sdta.size - (smpl.size - kept), at: sdta.offset + 4)
        font.put32(font.bytes.count - 8, at: 4)
        try withTemporaryFolder("damaged-font") { folder in
            let path = try font.write("half.sf2", in: folder)
            let warnings = try SoundFontInfo.inspect(path: path)
            #expect(warnings.count == 1 && warnings[0].contains("cut short") && warnings[0].contains("play silence"))
            #expect(try SoundFontInfo.inspect(path: bundledFont).isEmpty)
            try SamplerNode().loadSoundFont(at: path)
        }
    }

    @Test("a font whose odd-sized sample data has no pad byte (MuseScore_General_Lite.sf3's shape) loads and plays")
    func unpaddedSampleData() throws {
        var font = DamagedSoundFont(contentsOf: bundledFont)
        font.dropPadByteAfterSampleData()
        try withTemporaryFolder("damaged-font") { folder in
            let path = try font.write("unpadded.sf2", in: folder)
            #expect(try SoundFontInfo.inspect(path: path).isEmpty)
            #expect(
                try SoundFontInfo.load(path: path).presets.count == SoundFontInfo.load(path: bundledFont).presets.count)
            let played = try renderedNote(font: path)
            #expect(played.contains { abs($0) > 0.01 })
            #expect(played == (try renderedNote(font: bundledFont)), "the same samples as the font it was made from")
        }
    }
}
