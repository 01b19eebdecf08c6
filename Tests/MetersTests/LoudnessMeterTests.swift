import Meters
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("LoudnessMeter (libebur128)")
struct LoudnessMeterTests {
    @Test(
        "EBU R 128's reference: a 1 kHz sine at −23 dBFS on both channels reads −23 LUFS; an fs/4 sine at 45° has its true peak between the samples"
    )
    func reference() throws {
        let rate = 48_000
        let amplitude = Float(pow(10, -23.0 / 20))
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: Double(rate))
        let sine = (0..<rate * 20).map { amplitude * Float(sin(2 * Double.pi * 1_000 * Double($0) / Double(rate))) }
        sine.withUnsafeBufferPointer {
            meter.add(left: $0.baseAddress!, right: $0.baseAddress!, frameCount: sine.count)
        }
        #expect(abs(meter.integratedLoudness - -23) < 0.1, "\(meter.integratedLoudness) LUFS")
        let peaky = try LoudnessMeter(channelCount: 1, sampleRate: Double(rate))
        let quarter = (0..<rate).map { Float(0.5 * sin(Double.pi / 2 * Double($0) + Double.pi / 4)) }
        quarter.withUnsafeBufferPointer { peaky.add(interleaved: $0) }
        // Samples reach 0.354 (−9.0 dBFS); the wave itself 0.5 (−6.0 dBTP).
        #expect(abs(peaky.truePeak - -6.02) < 0.3, "\(peaky.truePeak) dBTP")
        #expect(
            try LoudnessMeter(channelCount: 2, sampleRate: Double(rate)).integratedLoudness == -.infinity, "silence")
    }
}
