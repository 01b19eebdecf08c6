import Foundation
import SoundFontFiles
import TestSupport
import Testing

/// The native reader's fuzzer findings (Fuzz/SoundFontBankFuzzer.swift), each remade here from
/// the bundled font the way the crashing input was made: a few bytes changed.
@Suite struct FuzzFindingTests {
    private func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

    private func put16(_ value: Int, _ bytes: inout [UInt8], _ at: Int) {
        bytes[at] = UInt8(value & 0xFF)
        bytes[at + 1] = UInt8(value >> 8 & 0xFF)
    }

    /// Where record `index` of pdta chunk `name` starts.
    private func record(_ font: DamagedSoundFont, _ name: String, _ index: Int, size: Int) throws -> Int {
        let chunk = try #require(font.chunks(inList: "pdta")[name], "no '\(name)' chunk")
        return chunk.offset + 8 + index * size
    }

    /// A sample's name with a line break, in an error about that sample, made the message two
    /// lines. Control characters are now shown as "?".
    @Test func aNameWithALineBreakStaysOneLineInTheError() throws {
        try withTemporaryFolder("fuzz-findings") { folder in
            var font = DamagedSoundFont(contentsOf: bundledFont)
            let at = try record(font, "shdr", 0, size: 46)
            for (offset, byte) in Array("Bad\nName\u{7}\0".utf8).enumerated() { font.bytes[at + offset] = byte }
            font.put32(0x7FFF_FFF0, at: at + 24)  // its end far past the sample data
            let path = try font.write("name.sf2", in: folder)
            let bank = try SoundFontBank(contentsOf: path)
            #expect {
                _ = try bank.readSample(0)
            } throws: { error in
                let text = "\(error)"
                return !text.contains("\n") && text.contains("'Bad?Name?'") && text.hasPrefix(path + ": ")
            }
            let problem = try #require(bank.sampleProblem(0))
            #expect(!problem.contains("\n") && problem.contains("Bad?Name?"), "\(problem)")
        }
    }

    /// A key or velocity range starting above 127 (200...250) made an invalid ClosedRange and
    /// crashed the read. No MIDI note reaches such a zone: it is dropped, as one naming no sample.
    @Test(arguments: [43, 44])
    func aRangeAbove127DropsTheZone(generator: Int) throws {
        try withTemporaryFolder("fuzz-findings") { folder in
            var font = DamagedSoundFont(contentsOf: bundledFont)
            let whole = try SoundFontBank(contentsOf: bundledFont)
            // The first instrument zone that starts with a key range (a velocity range may come first too).
            let bags = try #require(font.chunks(inList: "pdta")["ibag"]).size / 4
            var changed: Int?
            for bag in 0..<(bags - 1) {
                let first = u16(font.bytes, try record(font, "ibag", bag, size: 4))
                let end = u16(font.bytes, try record(font, "ibag", bag + 1, size: 4))
                let at = try record(font, "igen", first, size: 4)
                // A zone with a sample (not a global zone), whose first generator is its key range.
                let last = try record(font, "igen", end - 1, size: 4)
                guard end > first + 1, u16(font.bytes, at) == 43, u16(font.bytes, last) == 53 else { continue }
                put16(generator, &font.bytes, at)
                font.bytes[at + 2] = 200
                font.bytes[at + 3] = 250
                changed = bag
                break
            }
            try #require(changed != nil, "no zone with a key range")
            let path = try font.write("range.sf2", in: folder)
            let bank = try SoundFontBank(contentsOf: path)
            let zones = bank.instruments.map(\.zones.count).reduce(0, +)
            #expect(zones == whole.instruments.map(\.zones.count).reduce(0, +) - 1)
            for zone in bank.instruments.flatMap(\.zones) {
                #expect(zone.keyRange.upperBound <= 127 && zone.velocityRange.upperBound <= 127)
            }
        }
    }

    /// A sample without points whose loop starts in the padding after it and ends past the
    /// padding: the end moved back to the sample's end, behind the start (loop 6..<0). The loop is
    /// now empty there, at the sample's end; the same for a sample with points.
    @Test func aLoopStartingInThePaddingStaysInOrder() throws {
        try withTemporaryFolder("fuzz-findings") { folder in
            var font = DamagedSoundFont(contentsOf: bundledFont)
            let at = try record(font, "shdr", 0, size: 46)
            let start = Int(font.bytes[at + 20]) | Int(font.bytes[at + 21]) << 8 | Int(font.bytes[at + 22]) << 16
            font.put32(start, at: at + 24)  // end = start: no points
            font.put32(start + 6, at: at + 28)  // the loop starts in the padding
            font.put32(start + 100_000, at: at + 32)  // and ends far past it
            let path = try font.write("loop.sf2", in: folder)
            let bank = try SoundFontBank(contentsOf: path)
            let sample = try bank.readSample(0)
            #expect(sample.count == 0)
            #expect(sample.loopStart <= sample.loopEnd && sample.loopEnd <= sample.points.count)
            #expect(bank.sampleProblem(0)?.contains("has no points") == true)
        }
        let points = [Int16](repeating: 0, count: 2426)
        let sample = SampleData(points: points, count: 2380, loopStart: 2404, loopEnd: 9999, sampleRate: 44_100)
        #expect(sample.loopStart == 2380 && sample.loopEnd == 2380)
    }
}
