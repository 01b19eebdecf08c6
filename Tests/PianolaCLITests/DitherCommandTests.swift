import AudioFiles
import TestSupport
import Testing

@Suite("16-bit output: rounded to nearest, --dither on render and process", .serialized)
struct DitherCommandTests {
    /// The steps of a 16-bit file (samples × 32768).
    private func steps(_ path: String) throws -> [Double] {
        try AudioFile.read(from: path).samples.map { Double($0) * 32_768 }
    }

    @Test("render: s16 holds the f32 render rounded to nearest; --dither adds ±1 step of unbiased noise")
    func render() throws {
        try withTemporaryFolder("dither") { directory in
            let exact = try renderDemoSong(into: directory + "/exact.wav", []).map { Double($0) * 32_768 }
            for (name, extra) in [("plain", [String]()), ("dithered", ["--dither"])] {
                let result = try runPianola(
                    ["render", "-q", demoSong, "-o", "\(directory)/\(name).wav", "-s", bundledFontPath] + extra)
                #expect(result.status == 0, "\(result.stderr)")
            }
            let plain = try steps(directory + "/plain.wav")
            let dithered = try steps(directory + "/dithered.wav")
            #expect(plain.count == exact.count && dithered.count == exact.count)
            let rounded = exact.map { min(max($0.rounded(), -32_768), 32_767) }
            #expect(plain == rounded, "every sample rounded to the nearest step")
            let errors = zip(dithered, exact).map { $0 - $1 }
            #expect(errors.allSatisfy { abs($0) <= 1.5 }, "\(errors.map(abs).max() ?? 0) steps at most")
            #expect(abs(errors.reduce(0, +) / Double(errors.count)) < 0.01, "unbiased")
            #expect(dithered != plain)
        }
    }

    @Test("process --dither: the same noise on a file's way through, nothing at f32")
    func process() throws {
        try withTemporaryFolder("dither") { directory in
            _ = try renderDemoSong(into: directory + "/in.wav", [])
            for (name, extra) in [("plain", ["--format", "s16"]), ("dithered", ["--format", "s16", "--dither"])] {
                let result = try runPianola(
                    ["process", "-q", directory + "/in.wav", "-o", "\(directory)/\(name).wav", "--fx", "eq:gain=0"]
                        + extra)
                #expect(result.status == 0, "\(result.stderr)")
            }
            let plain = try steps(directory + "/plain.wav")
            let dithered = try steps(directory + "/dithered.wav")
            let differing = zip(plain, dithered).filter { $0 != $1 }.count
            #expect(differing > plain.count / 4, "\(differing) of \(plain.count) samples moved by the dither")
            #expect(zip(plain, dithered).allSatisfy { abs($0 - $1) <= 2 })
            let float = try runPianola(
                ["process", "-q", directory + "/in.wav", "-o", directory + "/f.wav", "--fx", "eq:gain=0", "--dither"])
            #expect(float.status == 0, "\(float.stderr)")
            #expect(
                try AudioFile.read(from: directory + "/f.wav").samples
                    == AudioFile.read(from: directory + "/in.wav").samples)
        }
    }
}
