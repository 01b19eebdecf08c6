import ALSAIO
import AudioGraph
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ALSA link smoke tests: the null PCM")
struct ALSALinkTests {
    @Test("the ALSA null PCM opens, plays a few periods of an engine's output and drains")
    func alsaNullDevice() throws {
        let output = try ALSAOutput(engine: AudioEngine(), configuration: nullDevice())
        try output.start()
        usleep(20_000)
        output.stop()
        #expect(output.failure == nil)
        #expect(output.periodFrames == 256)
    }

    @Test("an unknown ALSA device name is a cannotOpen error naming the device")
    func unknownDevice() {
        var configuration = nullDevice()
        configuration.device = "no_such_pianola_device"
        do {
            _ = try ALSAOutput(engine: AudioEngine(), configuration: configuration)
            Issue.record("opening a nonexistent device succeeded")
        } catch {
            #expect(error.description.contains("no_such_pianola_device"))
        }
    }
}

private func nullDevice() -> ALSAOutput.Configuration {
    var configuration = ALSAOutput.Configuration()
    configuration.device = "null"
    return configuration
}
