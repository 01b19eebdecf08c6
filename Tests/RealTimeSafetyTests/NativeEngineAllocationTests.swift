import CAllocationCounter
import Pianola
import SoundFontFiles
import Testing
import VoiceEngine

@Suite("Real-time safety: the native voice engine")
struct NativeEngineAllocationTests {
    @Test(
        "the native sampler's render path, its reverb and chorus on, allocates nothing and takes no lock after warm-up"
    )
    func nativeRenderIsRealTimeSafe() throws {
        let engine = AudioEngine()
        let sampler = NativeSamplerNode()
        // FluidSynth's defaults: the sends go through the reverb and the chorus.
        #expect(sampler.isReverbEnabled && sampler.isChorusEnabled)
        try sampler.load(try SoundFontBank(contentsOf: fontPath))
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        let (player, buffer) = try playDenseFile(in: engine, into: sampler)
        var allocations = 0
        var locks = 0
        var quanta = 0
        var busiest = 0
        for round in 0..<3 {
            if round == 1 { player.seek(toSeconds: 3) }
            if round == 2 { player.setLoop(4..<5, count: -1) }
            for quantum in 0..<500 {
                // Switched off and on again: the effects restart from silence on the render thread.
                if round == 1 && quantum == 100 { (sampler.isReverbEnabled, sampler.isChorusEnabled) = (false, false) }
                if round == 1 && quantum == 200 { (sampler.isReverbEnabled, sampler.isChorusEnabled) = (true, true) }
                pianola_allocations_start()
                pianola_locks_start()
                engine.render(frameCount: 256, into: buffer)
                locks += pianola_locks_stop()
                allocations += pianola_allocations_stop()
                busiest = max(busiest, sampler.activeVoiceCount)
                quanta += 1
            }
        }
        #expect(busiest >= 16, "the test renders dense music: at most \(busiest) voices")
        #expect(allocations == 0, "\(allocations) allocations in \(quanta) quanta")
        #expect(locks == 0, "\(locks) locks in \(quanta) quanta")
    }
}
