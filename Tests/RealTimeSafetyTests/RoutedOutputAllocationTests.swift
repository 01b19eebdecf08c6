import CAllocationCounter
import Pianola
import TestSupport
import Testing

@Suite("Real-time safety: routed output, rate domains")
struct RoutedOutputAllocationTests {
    @Test("a song shared out by channel to two samplers on a four-channel output makes no heap allocation")
    func noAllocationsWithChannelMap() throws {
        let engine = AudioEngine()
        let band = try SamplerNode(name: "band")
        try band.loadSoundFont(at: fontPath)
        let drums = try SamplerNode(name: "drums", sharingSoundFontsWith: band)
        let drumMixer = MixerNode(name: "drum mixer")
        for node in [band, drums, drumMixer] as [AudioNode] { try engine.attach(node) }
        try engine.connect(band, to: engine.mainMixerNode)
        try engine.connect(drums, to: drumMixer)
        try engine.connect(engine.mainMixerNode, to: engine.outputNode, channels: [0, 1])
        try engine.connect(drumMixer, to: engine.outputNode, channels: [2, 3])
        // Channels 10 and 16 to the drums; everything else (and every SysEx) to the band.
        let router = try MIDIChannelRouter(
            destinations: [band, drums], channelRoutes: (0..<16).map { $0 == 9 || $0 == 15 ? 1 : 0 })
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: router)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(
            format: AudioFormat(sampleRate: 44_100, channelCount: 4), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 4, frameCapacity: 256)
        player.play()
        for _ in 0..<200 { engine.render(frameCount: 256, into: buffer) }

        var allocations = 0
        var drumPeak: Float = 0
        for round in 0..<3 {
            if round == 1 { player.seek(toSeconds: 3) }
            // A graph change while rendering: the render thread adopts the new plan (this once
            // allocated: iterating the plan's mixer inputs as tuples, in unoptimized builds).
            if round == 2 { try engine.connect(drumMixer, to: engine.outputNode, channels: [3, 2]) }
            for _ in 0..<400 {
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
                for frame in 0..<256 { drumPeak = max(drumPeak, abs(buffer.channel(2)[frame])) }
            }
        }
        #expect(band.activeVoiceCount > 0 && drums.activeVoiceCount > 0, "both samplers play")
        #expect(drumPeak > 0.001, "the drums reach output 3")
        #expect(allocations == 0, "\(allocations) allocations")
    }

    @Test("a sampler through a varispeed gliding between rates (a rate domain of its own) makes no heap allocation")
    func noAllocationsWithVarispeed() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        let varispeed = VarispeedNode()
        try engine.attach(sampler)
        try engine.attach(varispeed)
        try engine.connect(sampler, to: varispeed)
        try engine.connect(varispeed, to: engine.mainMixerNode)
        try engine.installTap(on: sampler, PeakMeter())
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: sampler)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        player.play()
        varispeed.rate = 4
        for _ in 0..<200 { engine.render(frameCount: 256, into: buffer) }

        var allocations = 0
        for round in 0..<4 {
            varispeed.rate = [0.25, 1.7, 4, 0.8][round]
            if round == 2 { player.seek(toSeconds: 2) }
            for _ in 0..<300 {
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
            }
        }
        #expect(sampler.activeVoiceCount > 0, "the sampler plays")
        #expect(varispeed.inputSampleTime > 4 * 300 * 256, "the sampler renders at the varispeed's pace")
        #expect(allocations == 0, "\(allocations) allocations")
    }

    @Test("a sampler through a time-pitch unit changing rate and pitch makes no heap allocation")
    func noAllocationsWithTimePitch() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        let timePitch = TimePitchNode()
        try engine.attach(sampler)
        try engine.attach(timePitch)
        try engine.connect(sampler, to: timePitch)
        try engine.connect(timePitch, to: engine.mainMixerNode)
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: sampler)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        player.play()
        for _ in 0..<300 { engine.render(frameCount: 256, into: buffer) }

        var allocations = 0
        var peak: Float = 0
        let settings: [(rate: Double, pitch: Double)] = [
            (0.5, 300), (2, -1_200), (1 / 32.0, 2_400), (32, -2_400), (1 / 32.0, 2_400), (32, 0), (1, 0),
        ]
        for (rate, pitch) in settings {
            timePitch.rate = rate
            timePitch.pitch = pitch
            for _ in 0..<200 {
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
                for frame in 0..<256 { peak = max(peak, abs(buffer.channel(0)[frame])) }
            }
        }
        #expect(peak > 0.01, "the music comes through")
        #expect(allocations == 0, "\(allocations) allocations")
    }

    @Test("a time-pitch unit cutting a held tone at its attacks, at rates 1/4 to 4, makes no heap allocation")
    func noAllocationsCuttingAtAttacks() throws {
        let samples = heldToneWithBursts(seconds: 40, sampleRate: 44_100)
        let engine = AudioEngine()
        let player = AudioFilePlayerNode()
        let timePitch = TimePitchNode()
        try engine.attach(player)
        try engine.attach(timePitch)
        try engine.connect(player, to: timePitch)
        try engine.connect(timePitch, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        try player.schedule(try AudioClip(channels: [samples], sampleRate: 44_100))
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        for _ in 0..<100 { engine.render(frameCount: 256, into: buffer) }

        var allocations = 0
        // Rate 4 two octaves down (SoundTouch at tempo 16) does not cut: the other path.
        let settings: [(rate: Double, pitch: Double, cuts: Bool)] = [
            (1, 0, true), (0.8, 700, true), (1.25, -700, true), (0.25, 0, false), (4, 1_200, true),
            (0.5, -2_400, false), (2, 2_400, true), (4, -2_400, false), (1, 0, true),
        ]
        for (rate, pitch, cuts) in settings {
            timePitch.rate = rate
            timePitch.pitch = pitch
            let before = timePitch.attacksCut
            var peak: Float = 0
            for _ in 0..<150 {
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
                for frame in 0..<256 { peak = max(peak, abs(buffer.channel(0)[frame])) }
            }
            #expect(peak > 0.05, "rate \(rate), \(pitch) cents: silent")
            if cuts { #expect(timePitch.attacksCut > before, "rate \(rate), \(pitch) cents: no attack cut") }
        }
        #expect(allocations == 0, "\(allocations) allocations")
    }
}
