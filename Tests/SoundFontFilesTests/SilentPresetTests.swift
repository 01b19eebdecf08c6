import Foundation
import SoundFontFiles
import TestSupport
import Testing

/// The presets the native reader warns about: those no note sounds on, each with its reason.
@Suite struct SilentPresetTests {
    /// Where the record of chunk `name` number `index` starts in the font's bytes.
    private func record(_ font: DamagedSoundFont, _ name: String, _ index: Int, size: Int) throws -> Int {
        let chunk = try #require(font.chunks(inList: "pdta")[name], "no '\(name)' chunk")
        return chunk.offset + 8 + index * size
    }

    /// The sample headers preset `index` reaches, through its instruments' zones.
    private func samples(of index: Int, in bank: SoundFontBank) -> Set<Int> {
        Set(bank.presets[index].zones.flatMap { bank.instruments[$0.target!].zones.map { $0.target! } })
    }

    /// Every preset of the bundled font and Debian's fonts sounds, and every sample plays.
    @Test(arguments: [bundledFont] + debianFonts.filter { !$0.hasSuffix(".sf3") })
    func wholeFontsHaveNoSilentPresets(path: String) throws {
        let bank = try SoundFontBank(contentsOf: path)
        #expect(bank.silentPresets().isEmpty)
        #expect(bank.sampleProblems().allSatisfy { $0 == nil })
    }

    /// A preset whose samples are in ROM, have no points, or whose zones name no instrument is
    /// silent, with the reason; the others still sound (but those playing only the same samples).
    @Test func damagedPresetsAreSilentWithTheReason() throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let piano = try #require(bank.presets.firstIndex { $0.bank == 0 && $0.program == 0 })
        let reached = samples(of: piano, in: bank)
        // The presets that play only the piano's samples fall silent with it.
        let sharing = bank.presets.indices.filter {
            let theirs = samples(of: $0, in: bank)
            return !theirs.isEmpty && theirs.isSubset(of: reached)
        }
        #expect(sharing.contains(piano))
        try withTemporaryFolder("silent-presets") { folder in
            var rom = DamagedSoundFont(contentsOf: bundledFont)
            var empty = rom
            var noZones = rom
            for sample in reached {
                let at = try record(rom, "shdr", sample, size: 46)
                let type = Int(rom.bytes[at + 44]) | Int(rom.bytes[at + 45]) << 8
                rom.bytes[at + 44] = UInt8(type & 0xFF)
                rom.bytes[at + 45] = UInt8((type | 0x8000) >> 8)
                // end = start: no points.
                for byte in 0..<4 { empty.bytes[at + 24 + byte] = empty.bytes[at + 20 + byte] }
            }
            // Every zone of the piano names an instrument that does not exist: FluidSynth drops
            // such zones, so the preset has none left.
            let firstBag =
                Int(noZones.bytes[try record(noZones, "phdr", piano, size: 38) + 24])
                | Int(noZones.bytes[try record(noZones, "phdr", piano, size: 38) + 25]) << 8
            let endBag =
                Int(noZones.bytes[try record(noZones, "phdr", piano + 1, size: 38) + 24])
                | Int(noZones.bytes[try record(noZones, "phdr", piano + 1, size: 38) + 25]) << 8
            for bag in firstBag..<endBag {
                let bagAt = try record(noZones, "pbag", bag, size: 4)
                let first = Int(noZones.bytes[bagAt]) | Int(noZones.bytes[bagAt + 1]) << 8
                let end = Int(noZones.bytes[bagAt + 4]) | Int(noZones.bytes[bagAt + 5]) << 8
                for generator in first..<end {
                    let at = try record(noZones, "pgen", generator, size: 4)
                    if noZones.bytes[at] == 41 && noZones.bytes[at + 1] == 0 {
                        noZones.bytes[at + 2] = 0xFF
                        noZones.bytes[at + 3] = 0xFF
                    }
                }
            }
            for (font, words, expected) in [
                (rom, "in a ROM the file lacks", sharing), (empty, "has no points", sharing),
                (noZones, "no zones", [piano]),
            ] {
                let path = try font.write("silent.sf2", in: folder)
                let damaged = try SoundFontBank(contentsOf: path)
                let silent = damaged.silentPresets()
                #expect(silent.map(\.index) == expected, "\(words): \(silent)")
                #expect(silent.first?.reason.contains(words) == true, "\(silent)")
                // Given the samples' problems, the same answer.
                #expect(damaged.silentPresets(sampleProblems: damaged.sampleProblems()) == silent)
            }
        }
    }
}
