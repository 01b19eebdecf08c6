import AudioGraph
import CJACK
import Foundation
import JACKIO
import MIDICore
import SMF
import Sampler
import Sequencer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A song for the transport: 120 BPM in 4/4 (a bar is 2 s, bar 9 starts at 16 s), a program
/// change and a volume at the start (so that playing from bar 9 needs the chase), then a note
/// on every beat for 24 bars, half a beat long.
func transportSong() -> MusicSequence {
    var events: [(Int, MIDIMessage)] = [
        (0, .programChange(channel: 0, program: 24)), (0, .controlChange(channel: 0, controller: 7, value: 110)),
    ]
    for beat in 0..<96 {
        let key = UInt8(48 + (beat * 5) % 24)
        events.append((beat * 480, .noteOn(channel: 0, note: key, velocity: 100)))
        events.append((beat * 480 + 240, .noteOff(channel: 0, note: key, velocity: 0)))
    }
    return MusicSequence(file: makeFile(tracks: [events]))
}

/// The bundled font without reverb or chorus, at 48 kHz.
func dryBundledSampler() throws -> SamplerNode {
    var settings = SamplerNode.Settings()
    settings.sampleRate = 48_000
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    let sampler = try SamplerNode(settings: settings)
    _ = try sampler.loadSoundFont(at: bundledFont)
    return sampler
}

/// The song rendered offline from `seconds` (its channels chased, as a seek does), in 1024-frame quanta.
func offlineRender(_ sequence: MusicSequence, from seconds: Double, frames: Int) throws -> [Float] {
    let sampler = try dryBundledSampler()
    let engine = AudioEngine()
    try engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)
    let player = MusicPlayer(sequence: sequence, destination: sampler)
    try engine.addRenderObserver(player)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 1_024)
    player.seek(toSeconds: seconds)
    player.play()
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    try engine.renderOffline(frameCount: frames, into: buffer)
    return Array(UnsafeBufferPointer(start: buffer.channel(0), count: frames))
}

extension JACKOutputTests {
    /// Pianola following (or mastering) the test server's transport with the transport song,
    /// and the test's probe recording its ports.
    func followingTransport(
        on server: JACKServer, as transport: JACKOutput.Transport = .followed
    ) throws -> (JACKOutput, MusicPlayer, TransportProbe) {
        let sampler = try dryBundledSampler()
        let engine = AudioEngine()
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        let player = MusicPlayer(sequence: transportSong(), destination: sampler)
        player.followsTransport = true
        try engine.addRenderObserver(player)
        let output = try JACKOutput(
            engine: engine,
            configuration: .init(serverName: server.name, connectsToPlayback: false, transport: transport))
        output.transportFollower = player
        engine.outputDevice = output
        try output.start()
        let probe = try TransportProbe(server: server.name)
        #expect(probe.connect(output.portNames))
        return (output, player, probe)
    }

    /// The recorded cycles in which the transport rolled from `frame` on, each against the
    /// offline render from `frame`: the largest difference, and how many cycles were compared.
    func compare(
        _ recording: (cycles: [TransportProbe.Cycle], left: [Float], right: [Float]), rollingFrom frame: Int,
        expected: [Float], skippingSeconds skip: Double = 0
    ) -> (difference: Float, cycles: Int) {
        var largest: Float = 0
        var compared = 0
        for cycle in recording.cycles where cycle.state == JackTransportRolling && cycle.frame >= frame {
            let offset = cycle.frame - frame
            guard offset >= Int(skip * 48_000), offset + cycle.count <= expected.count else { continue }
            for index in 0..<cycle.count {
                largest = max(largest, abs(recording.left[cycle.index + index] - expected[offset + index]))
            }
            compared += 1
        }
        return (largest, compared)
    }

    /// Up to three tries of `attempt` (what went wrong in it; nothing: it passed): a cycle the
    /// server ran late on a busy machine (an xrun) spoils a recording compared sample for sample.
    func threeTries(_ attempt: () throws -> [String]) rethrows {
        var problems: [String] = []
        for _ in 0..<3 {
            problems = try attempt()
            if problems.isEmpty { return }
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(
        "transport located to bar 9 while stopped, then started: silence until it rolls, then the offline render from bar 9, sample for sample"
    )
    func transportLocateThenStart() throws {
        let server = try server()
        let expected = try offlineRender(transportSong(), from: 16, frames: 2 * 48_000)
        try threeTries {
            var problems: [String] = []
            func need(_ condition: Bool, _ what: @autoclosure () -> String) {
                if !condition { problems.append(what()) }
            }
            let (output, player, probe) = try followingTransport(on: server)
            defer { output.close() }
            usleep(300_000)
            probe.locate(frame: 16 * 48_000)
            usleep(200_000)
            need(abs(player.currentPositionInSeconds - 16) < 0.001, "position \(player.currentPositionInSeconds)")
            probe.start()
            usleep(2_500_000)
            probe.stop()
            usleep(300_000)
            let recording = probe.recording()
            guard let firstRolling = recording.cycles.firstIndex(where: { $0.state == JackTransportRolling }) else {
                return ["the transport never rolled"]
            }
            need(
                recording.cycles[firstRolling].frame == 16 * 48_000,
                "rolled from \(recording.cycles[firstRolling].frame)")
            let before = recording.left[0..<recording.cycles[firstRolling].index]
            need(before.count > 10_000 && before.allSatisfy { $0 == 0 }, "sound before the transport rolled")
            let (difference, compared) = compare(recording, rollingFrom: 16 * 48_000, expected: expected)
            need(compared >= 80, "\(compared) rolling cycles recorded (\(output.xrunCount) xruns)")
            need(
                difference == 0, "largest difference from the offline render: \(difference) (\(output.xrunCount) xruns)"
            )
            return problems
        }
    }

    @Test("transport started, located to bar 9 while rolling, stopped: each followed in the cycle it happens")
    func transportStartLocateStop() throws {
        let server = try server()
        let expected = try offlineRender(transportSong(), from: 16, frames: 2 * 48_000)
        try threeTries {
            var problems: [String] = []
            func need(_ condition: Bool, _ what: @autoclosure () -> String) {
                if !condition { problems.append(what()) }
            }
            let (output, _, probe) = try followingTransport(on: server)
            defer { output.close() }
            usleep(300_000)
            probe.start()
            usleep(1_500_000)
            probe.locate(frame: 16 * 48_000)
            usleep(2_000_000)
            probe.stop()
            usleep(1_500_000)
            let recording = probe.recording()
            let cycles = recording.cycles
            func level(_ cycle: TransportProbe.Cycle) -> Float {
                recording.left[cycle.index..<(cycle.index + cycle.count)].map(abs).max() ?? 0
            }
            // Start: the first rolling cycle (frame 0) sounds the first note; nothing before it.
            guard let first = cycles.firstIndex(where: { $0.state == JackTransportRolling }),
                let relocated = cycles.firstIndex(where: { $0.state == JackTransportRolling && $0.frame >= 16 * 48_000 }
                ),
                let lastRolling = cycles.lastIndex(where: { $0.state == JackTransportRolling })
            else { return ["the transport did not roll from 0 and from bar 9"] }
            need(
                cycles[first].frame == 0 && level(cycles[first]) > 0.001, "first rolling cycle: \(level(cycles[first]))"
            )
            need(cycles[..<first].allSatisfy { level($0) == 0 }, "sound before the start")
            // The locate: rolling again from bar 9, and from there the offline render from bar 9
            // (after half a second, when the notes released at the locate have died away).
            need(cycles[relocated].frame == 16 * 48_000, "relocated to \(cycles[relocated].frame)")
            let (difference, compared) = compare(
                recording, rollingFrom: 16 * 48_000, expected: expected, skippingSeconds: 0.5)
            need(compared >= 50 && difference < 1e-4, "difference \(difference) over \(compared) cycles")
            // The first cycle from bar 9 already sounds its note: the cue was ready before it rolled.
            let onset = recording.left[cycles[relocated].index..<(cycles[relocated].index + 1_024)]
            let expectedOnset = expected[0..<1_024]
            let residual = zip(onset, expectedOnset).map { abs($0 - $1) }.max() ?? 1
            let peak = expectedOnset.map(abs).max() ?? 0
            need(peak > 0.001 && residual < peak / 2, "first cycle from bar 9: peak \(peak), residual \(residual)")
            // Stop: the cycle it stops in releases the note; a second later every sample is zero.
            let stopped = lastRolling + 1
            guard stopped < cycles.count else { return problems + ["nothing recorded after the stop"] }
            let tail = cycles[stopped...].filter { $0.index >= cycles[stopped].index + 48_000 }
            need(tail.count > 10 && tail.allSatisfy { level($0) == 0 }, "sound a second after the stop")
            return problems
        }
    }

    @Test("timebase master: every client reads the song's bar, beat and tempo, bar 9 at 16 s")
    func timebaseMaster() throws {
        let server = try server()
        let (output, _, probe) = try followingTransport(on: server, as: .timebaseMaster)
        defer { output.close() }
        usleep(300_000)
        probe.locate(frame: 16 * 48_000)
        usleep(200_000)
        let located = output.transportPosition()
        #expect(located.state == .stopped && located.seconds == 16)
        #expect(located.music?.bar == 9 && located.music?.beat == 1 && located.music?.tick == 0, "\(located)")
        #expect(located.music?.beatsPerMinute == 120 && located.music?.beatsPerBar == 4)
        probe.start()
        usleep(1_000_000)
        probe.stop()
        let cycles = probe.recording().cycles.filter { $0.state == JackTransportRolling }
        #expect(cycles.count > 20)
        for cycle in cycles {
            // The beat the cycle's first frame falls in, counted from bar 1.
            let beats = Double(cycle.frame) / 24_000
            let bar = Int32(beats / 4) + 1
            let beat = Int32(beats.truncatingRemainder(dividingBy: 4)) + 1
            #expect(
                cycle.bbt?.bar == bar && cycle.bbt?.beat == beat && cycle.bbt?.bpm == 120,
                "\(cycle.frame): \(String(describing: cycle.bbt))")
        }
        output.close()
        usleep(200_000)
        #expect(probe.recording().cycles.last?.bbt == nil, "the bar grid outlived its master")
    }
}
