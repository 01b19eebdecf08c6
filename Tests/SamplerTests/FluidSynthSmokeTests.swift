import Testing

@testable import Sampler

@Suite("FluidSynth link smoke test", .serialized)
struct FluidSynthSmokeTests {
    @Test("a synth without a font renders 512 frames of silence")
    func rendersWithoutFont() throws {
        let synth = try FluidSynth(sampleRate: 44_100)
        var left = [Float](repeating: 1, count: 512)
        var right = [Float](repeating: 1, count: 512)
        let ok = left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                synth.render(frameCount: 512, left: l.baseAddress!, right: r.baseAddress!)
            }
        }
        #expect(ok)
        // The buffers were pre-filled with 1.0: FluidSynth must have overwritten every frame.
        #expect(left.allSatisfy { $0 == 0 })
        #expect(right.allSatisfy { $0 == 0 })
    }

    @Test("a missing font is a typed notFound error")
    func missingFont() throws {
        let synth = try FluidSynth()
        #expect(throws: SoundFontError.notFound(path: "/nonexistent/font.sf2")) {
            try synth.loadSoundFont(at: "/nonexistent/font.sf2")
        }
    }
}
