import CAllocationCounter
import Pianola
import Testing

@testable import Sampler

#if canImport(Glibc)
    import Glibc
#endif

let fontPath: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

/// `engine` in manual rendering mode (stereo, 44.1 kHz, 256-frame quanta), playing `denseFile()`
/// into `destination`, already rendered for 200 quanta (warm-up): the player and a buffer to go on.
func playDenseFile(
    in engine: AudioEngine, into destination: any MIDIReceivingNode
) throws -> (player: MusicPlayer, buffer: AudioBuffer) {
    let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: destination)
    try engine.addRenderObserver(player)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
    player.play()
    for _ in 0..<200 { engine.render(frameCount: 256, into: buffer) }
    return (player, buffer)
}

/// A dense 16-channel piece: chords, runs, controllers, pitch bends, program changes and SysEx.
func denseFile() -> MIDIFile {
    var tracks: [MIDIFile.Track] = [
        MIDIFile.Track(events: [
            MIDIFile.Event(tick: 0, .meta(.tempo(microsecondsPerQuarterNote: 400_000))),
            MIDIFile.Event(tick: 48_000, .meta(.endOfTrack)),
        ])
    ]
    for channel in 0..<16 {
        var events: [MIDIFile.Event] = [
            MIDIFile.Event(tick: 0, .channel(.programChange(channel: UInt8(channel), program: UInt8(channel * 8))))
        ]
        for step in 0..<400 {
            let tick = step * 120
            let key = UInt8(36 + (step * 7 + channel * 5) % 60)
            events.append(
                MIDIFile.Event(tick: tick, .channel(.noteOn(channel: UInt8(channel), note: key, velocity: 100))))
            if step % 4 == 0 {
                events.append(
                    MIDIFile.Event(
                        tick: tick,
                        .channel(.controlChange(channel: UInt8(channel), controller: 1, value: UInt8(step % 128)))))
            }
            if step % 8 == 0 {
                events.append(
                    MIDIFile.Event(
                        tick: tick, .channel(.pitchBend(channel: UInt8(channel), value: UInt16(step * 40 % 16384)))))
            }
            events.append(
                MIDIFile.Event(tick: tick + 100, .channel(.noteOff(channel: UInt8(channel), note: key, velocity: 0))))
        }
        if channel == 0 {
            events.append(MIDIFile.Event(tick: 2_000, .sysEx([0x7F, 0x7F, 0x04, 0x01, 0x00, 0x60, 0xF7])))
        }
        events.sort { $0.tick < $1.tick }
        events.append(MIDIFile.Event(tick: 48_000, .meta(.endOfTrack)))
        tracks.append(MIDIFile.Track(events: events))
    }
    return MIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: tracks)
}

@Suite("Real-time safety")
struct RenderAllocationTests {
    @Test("the render path (player, sampler, mixer, meter) makes no heap allocation after warm-up")
    func noAllocationsWhileRendering() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        try engine.installTap(on: engine.mainMixerNode, PeakMeter())
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: sampler)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        player.play()
        // Warm-up: FluidSynth allocates its voices and buffers lazily on first use.
        for _ in 0..<200 { engine.render(frameCount: 256, into: buffer) }

        var allocations = 0
        var renderedQuanta = 0
        for round in 0..<4 {
            // Transport changes are made on the control side (which may allocate) between quanta.
            if round == 1 { player.seek(toSeconds: 3) }
            if round == 2 { player.setLoop(4..<5, count: -1) }
            if round == 3 { try engine.mainMixerNode.setVolume(0.5, forInputBus: 0) }
            for _ in 0..<500 {
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
                renderedQuanta += 1
            }
        }
        #expect(sampler.activeVoiceCount > 0, "the test renders real music")
        #expect(allocations == 0, "\(allocations) allocations in \(renderedQuanta) quanta")
        // Debian's libfluidsynth opens an OpenMP region per render call: it must run inline.
        #expect(FluidSynth.isRealtimeOpenMPInstalled)
        #expect(FluidSynth.inlineParallelRegions >= renderedQuanta)
    }

    @Test("live input (queue, scheduler, sampler; SysEx included) makes no heap allocation on the audio thread")
    func noAllocationsWithLiveInput() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        let queues = [MIDIEventQueue(), MIDIEventQueue()]
        let scheduler = LiveMIDIScheduler(queues: queues, destination: sampler, delay: .zero)
        try engine.addRenderObserver(scheduler)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        let masterVolume = MIDIMessage.systemExclusive([0x7F, 0x7F, 0x04, 0x01, 0x00, 0x70])
        func feed(_ step: Int) {
            // The input side (allowed to allocate): messages stamped now, on two queues.
            let now = MIDITimestamp.now()
            let key = UInt8(40 + step % 40)
            queues[0].push(.noteOn(channel: UInt8(step % 9), note: key, velocity: 100), arrival: now)
            queues[1].push(.controlChange(channel: 0, controller: 1, value: UInt8(step % 128)), arrival: now)
            queues[1].push(.pitchBend(channel: 1, value: UInt16(step * 64 % 16_384)), arrival: now)
            if step % 10 == 0 { queues[0].push(masterVolume, arrival: now) }
            queues[0].push(.noteOff(channel: UInt8(step % 9), note: key, velocity: 0), arrival: now + 3_000_000)
        }
        for step in 0..<200 {
            feed(step)
            engine.render(frameCount: 256, into: buffer)
        }
        let deliveredBefore = scheduler.deliveredCount
        var allocations = 0
        for step in 0..<1_000 {
            feed(step)
            pianola_allocations_start()
            engine.render(frameCount: 256, into: buffer)
            allocations += pianola_allocations_stop()
        }
        #expect(scheduler.deliveredCount - deliveredBefore >= 4_000, "the test plays real input")
        #expect(sampler.activeVoiceCount > 0)
        #expect(allocations == 0, "\(allocations) allocations in 1000 quanta")
    }

    @Test(
        "effects in the graph (EQ with gliding bands, a compressor with look-ahead, a distortion changing shapes, a gliding delay, a chorus taking new settings, reverb, true-peak and sample-peak limiters) make no heap allocation"
    )
    func noAllocationsWithEffects() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        let eq = EQNode(numberOfBands: 2)
        eq.bands[0].settings = FilterBand(type: .lowShelf, frequency: 200, gain: 4)
        eq.bands[1].settings = FilterBand(type: .parametric, frequency: 2_000, gain: -3, bandwidth: 1)
        for band in eq.bands { band.bypass = false }
        eq.design = .matched  // gliding bands use the closed form, settled ones the two-section design
        let limiter = LimiterNode()
        limiter.truePeak = true
        limiter.preGain = 12
        let reverb = ReverbNode(preset: .largeHall, wetDryMix: 40)
        let delay = DelayNode(delayTime: 0.3, feedback: 60, lowPassCutoff: 5_000, wetDryMix: 40)
        let compressor = DynamicsProcessorNode()
        compressor.lookAhead = 3
        compressor.expansionRatio = 2
        let distortion = DistortionNode(shape: .tube, drive: 12, tone: 8_000, wetDryMix: 30)
        let chorus = ChorusNode()
        // And a sample-peak limiter after it: its settled detection and its rest at unity.
        let peakLimiter = LimiterNode()
        for node in [sampler, eq, compressor, distortion, delay, chorus, reverb, limiter, peakLimiter] as [AudioNode] {
            try engine.attach(node)
        }
        try engine.connect(sampler, to: eq)
        try engine.connect(eq, to: compressor)
        try engine.connect(compressor, to: distortion)
        try engine.connect(distortion, to: delay)
        try engine.connect(delay, to: chorus)
        try engine.connect(chorus, to: reverb)
        try engine.connect(reverb, to: limiter)
        try engine.connect(limiter, to: peakLimiter)
        try engine.connect(peakLimiter, to: engine.mainMixerNode)
        let (_, buffer) = try playDenseFile(in: engine, into: sampler)
        var allocations = 0
        for quantum in 0..<500 {
            // Bands move while playing (the control side), the nodes glide on the audio side.
            // (From quantum 400 they rest: both bands settle, their two-section designs are fitted,
            // and they cross-fade to them.)
            if quantum < 400 {
                eq.bands[1].frequency = 1_000 + Double(quantum % 50) * 40
                eq.bands[0].gain = Double(quantum % 7 + 1)
            }
            if quantum == 250 { reverb.preset = .plate }
            // The delay glides to a new time, its cutoff across Nyquist (the filter off and on).
            if quantum % 100 == 0 {
                delay.delayTime = quantum % 200 == 0 ? 0.123 : 0.3
                delay.lowPassCutoff = quantum % 200 == 0 ? 30_000 : 3_000
                delay.wetDryMix = Double(quantum % 300) / 3
                // A new look-ahead restarts it on the audio thread; the detector switches.
                compressor.lookAhead = quantum % 200 == 0 ? 5 : 1
                compressor.detector = quantum % 200 == 0 ? .rms : .peak
                // Every shape in turn (the curves' tables, the crusher, the carrier), and a new
                // oversampling factor, which restarts the distorted path on the audio thread.
                let shapes = DistortionNode.Shape.allCases
                distortion.shape = shapes[(quantum / 100) % shapes.count]
                distortion.oversampling = [8, 4, 2, 1, 8][quantum / 100]
                distortion.tone = quantum % 200 == 0 ? 30_000 : 6_000
                // The chorus takes new settings on the audio thread.
                chorus.settings = Chorus.Settings(
                    voiceCount: quantum / 100 + 1, depth: Double(quantum / 50),
                    waveform: quantum % 200 == 0 ? .triangle : .sine)
            }  // rebuilt on the audio thread: Dattorro's plate
            pianola_allocations_start()
            engine.render(frameCount: 256, into: buffer)
            allocations += pianola_allocations_stop()
        }
        #expect(limiter.gainReduction < 0, "the limiter works on real music")
        #expect(compressor.gainReduction < 0, "the compressor works on real music")
        #expect(allocations == 0, "\(allocations) allocations in 500 quanta")
    }

    @Test(
        "an audio-file player (looping, clips scheduled and interrupting while it plays, varispeed) makes no heap allocation"
    )
    func noAllocationsWithFilePlayer() throws {
        let engine = AudioEngine()
        let player = AudioFilePlayerNode()
        let reverb = ReverbNode(preset: .mediumHall, wetDryMix: 50)
        for node in [player, reverb] as [AudioNode] { try engine.attach(node) }
        try engine.connect(player, to: reverb)
        try engine.connect(reverb, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        let tone = (0..<44_100).map { Float(sin(Double($0) * 0.05) * 0.3) }
        let clip = try AudioClip(channels: [tone], sampleRate: 44_100)  // converted to 48 kHz
        try player.schedule(clip, options: .loops)
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        for _ in 0..<50 { engine.render(frameCount: 256, into: buffer) }
        var allocations = 0
        for quantum in 0..<600 {
            if quantum % 100 == 50 { try player.schedule(clip, options: [.loops, .interrupts]) }
            if quantum % 100 == 80 { player.volume = Float(quantum % 3) * 0.4 }
            // Varispeed from quantum 300: the converter reads the schedule, the rate glides.
            if quantum >= 300 && quantum % 50 == 0 { player.rate = [1.5, 0.5, 2, 1, 0.25, 4][(quantum / 50) % 6] }
            pianola_allocations_start()
            engine.render(frameCount: 256, into: buffer)
            allocations += pianola_allocations_stop()
        }
        #expect(player.isPlaying)
        #expect(buffer.samples(channel: 0).contains { abs($0) > 0.01 }, "the player plays")
        #expect(allocations == 0, "\(allocations) allocations in 600 quanta")
    }

    @Test("the counter sees allocations (a test that could fail)")
    func counterWorks() {
        pianola_allocations_start()
        let array = [Int](repeating: 1, count: 1000 + Int.random(in: 0...10))
        let counted = pianola_allocations_stop()
        #expect(array.count > 999)
        #expect(counted >= 1)
    }
}
