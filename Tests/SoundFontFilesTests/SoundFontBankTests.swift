import Foundation
import Sampler
import SoundFontFiles
import TestSupport
import Testing

/// The project's own font, from this file's location.
let bundledFont: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

/// Debian's fonts the tests read when installed, besides the bundled one.
let debianFonts = [
    "/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3",
    "/usr/share/sounds/sf3/MuseScore_General.sf3", "/usr/share/sounds/sf2/TimGM6mb.sf2",
].filter { FileManager.default.fileExists(atPath: $0) }

@Suite struct SoundFontBankTests {
    /// Every font lists the presets FluidSynth lists, with the same banks, programs and names.
    @Test(arguments: [bundledFont] + debianFonts)
    func presetsAreFluidSynths(path: String) throws {
        let bank = try SoundFontBank(contentsOf: path)
        struct Entry: Hashable {
            var bank: Int
            var program: Int
            var name: String
        }
        let ours = bank.presets.map { Entry(bank: $0.bank, program: $0.program, name: $0.name) }
            .sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
        let fluidSynths = try SoundFontInfo.load(path: path).presets.map {
            Entry(bank: $0.bank, program: $0.program, name: $0.name)
        }
        #expect(ours.count == fluidSynths.count)
        #expect(ours == fluidSynths)
        // Every zone names an instrument or sample that exists.
        for preset in bank.presets {
            for zone in preset.zones { #expect(zone.target! < bank.instruments.count) }
        }
        for instrument in bank.instruments {
            for zone in instrument.zones { #expect(zone.target! < bank.samples.count) }
        }
    }

    /// The bundled font's samples read as the file holds them (16-bit little-endian points).
    @Test func soundFont2SamplesAreTheFilesPoints() throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        #expect(bank.majorVersion == 2)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bundledFont)))
        for index in [0, bank.samples.count / 2, bank.samples.count - 1] {
            let header = bank.samples[index]
            let sample = try bank.readSample(index)
            #expect(sample.count == header.end - header.start)
            #expect(sample.points.count >= sample.count)
            let first = bank.sampleData.offset + header.start * 2
            for point in [0, sample.count / 2, sample.count - 1] {
                let raw = Int16(
                    bitPattern: UInt16(bytes[first + point * 2]) | UInt16(bytes[first + point * 2 + 1]) << 8)
                #expect(sample.points[point] == raw)
            }
            #expect(sample.loopStart <= sample.loopEnd && sample.loopEnd <= sample.points.count)
        }
    }

    /// A SoundFont 3 sample decodes from its Ogg Vorbis stream to a sound with its loop inside it.
    @Test(.enabled(if: debianFonts.contains { $0.hasSuffix(".sf3") }, "no Debian SF3 font installed: skipped"))
    func soundFont3SamplesDecode() throws {
        let path = debianFonts.first { $0.hasSuffix(".sf3") }!
        let bank = try SoundFontBank(contentsOf: path)
        #expect(bank.majorVersion == 3)
        let piano = try #require(bank.preset(bank: 0, program: 0))
        let instrument = bank.instruments[piano.zones[0].target!]
        let index = instrument.zones[0].target!
        #expect(bank.samples[index].isCompressed)
        let sample = try bank.readSample(index)
        #expect(sample.count > 1000)
        #expect(sample.loopStart < sample.loopEnd && sample.loopEnd <= sample.count)
        let peak = sample.points.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 1000, "a piano sample that plays nearly silent: peak \(peak)")
    }

    /// Damaged fonts are refused with the file and the first problem, never a crash.
    @Test func damagedFontsAreRefusedWithTheProblem() throws {
        try withTemporaryFolder("soundfonts") { folder in
            let whole = DamagedSoundFont(contentsOf: bundledFont)
            var cut = whole
            cut.bytes.removeLast(whole.bytes.count / 3)
            var scrambled = whole
            scrambled.scrambleBagIndices()
            var notRIFF = whole
            notRIFF.bytes[0] = UInt8(ascii: "X")
            let cases: [(DamagedSoundFont, String)] = [
                (cut, "cut short"), (scrambled, "out of order"), (notRIFF, "not a SoundFont"),
                (DamagedSoundFont(contentsOf: "/dev/null"), "too short"),
            ]
            for (index, (font, words)) in cases.enumerated() {
                let path = try font.write("damaged-\(index).sf2", in: folder)
                #expect {
                    _ = try SoundFontBank(contentsOf: path)
                } throws: { error in
                    let description = "\(error)"
                    return description.hasPrefix(path + ": not a usable SoundFont: ") && description.contains(words)
                }
            }
            #expect(throws: SoundFontReadError.self) { _ = try SoundFontBank(contentsOf: folder + "/missing.sf2") }
        }
    }
}
