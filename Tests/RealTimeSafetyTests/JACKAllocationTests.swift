import CAllocationCounter
import Foundation
import Pianola
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Real-time safety: JACK's process callback")
struct JACKAllocationTests {
    @Test("a song, JACK MIDI input and an effect rendered in JACK's process callback make no heap allocation")
    func noAllocationsInProcessCallback() throws {
        let server = try JACKServer.started()
        var settings = SamplerNode.Settings()
        settings.sampleRate = 48_000
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: fontPath)
        let engine = AudioEngine()
        let reverb = ReverbNode()
        try engine.attach(sampler)
        try engine.attach(reverb)
        try engine.connect(sampler, to: reverb)
        try engine.connect(reverb, to: engine.mainMixerNode)
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: sampler)
        try engine.addRenderObserver(player)
        let output = try JACKOutput(
            engine: engine, configuration: .init(serverName: server.name, connectsToPlayback: true, hasMIDIInput: true))
        output.midiDestination = sampler
        engine.outputDevice = output
        try output.start()
        defer { output.close() }
        player.play()
        // A JACK sequencer's notes into the MIDI input too.
        let sequencer = try server.client("jack_midiseq", ["seq", "4800", "0", "72", "1000", "2011", "76", "1000"])
        defer { withExtendedLifetime(sequencer) {} }
        var connected = false
        for _ in 0..<250 where !connected {
            connected = (try? output.connectMIDI(from: "seq")) != nil
            if !connected { usleep(20_000) }
        }
        #expect(connected, "the sequencer never appeared")
        usleep(500_000)  // warm-up: voices, the reverb's first pass
        let thread = try #require(output.audioThreadID, "the process thread reports its id")
        let before = output.midiEventCount
        pianola_allocations_watch_thread(thread)
        usleep(1_000_000)
        let allocations = pianola_allocations_stop_watching_thread()
        #expect(output.midiEventCount - before >= 10, "MIDI events kept coming")
        #expect(sampler.activeVoiceCount > 0)
        #expect(allocations == 0, "\(allocations) allocations in JACK's process thread")
    }

    @Test(
        "following JACK's transport as its timebase master (start, locate while rolling, stop) makes no heap allocation"
    )
    func noAllocationsFollowingTheTransport() throws {
        let server = try JACKServer.started()
        var settings = SamplerNode.Settings()
        settings.sampleRate = 48_000
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: fontPath)
        let engine = AudioEngine()
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        let player = MusicPlayer(sequence: MusicSequence(file: denseFile()), destination: sampler)
        player.followsTransport = true
        try engine.addRenderObserver(player)
        let output = try JACKOutput(
            engine: engine,
            configuration: .init(serverName: server.name, connectsToPlayback: true, transport: .timebaseMaster))
        output.transportFollower = player
        engine.outputDevice = output
        try output.start()
        defer { output.close() }
        // Warm-up: each path once (a cue taken, the chase sent, notes released on a stop).
        output.locateTransport(toSeconds: 1)
        output.startTransport()
        usleep(400_000)
        output.stopTransport()
        usleep(200_000)
        let thread = try #require(output.audioThreadID, "the process thread reports its id")
        pianola_allocations_watch_thread(thread)
        output.locateTransport(toSeconds: 3)
        output.startTransport()
        usleep(500_000)
        let rolling = output.transportPosition()
        output.locateTransport(toSeconds: 6)
        usleep(500_000)
        let relocated = output.transportPosition()
        output.stopTransport()
        usleep(300_000)
        let allocations = pianola_allocations_stop_watching_thread()
        #expect(rolling.state == .rolling && rolling.music?.bar ?? 0 >= 1, "\(rolling)")
        #expect(relocated.state == .rolling && relocated.seconds > 6 && relocated.seconds < 6.6, "\(relocated)")
        #expect(player.currentPositionInSeconds > 6, "the player followed: \(player.currentPositionInSeconds)")
        #expect(allocations == 0, "\(allocations) allocations in JACK's process thread")
    }
}
