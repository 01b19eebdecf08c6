import AudioGraph
import Foundation
import JACKIO
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A source whose every frame tells its sample time: left = (t mod 2¹⁶) / 2¹⁶, right = −left / 2
/// (exact in a float file), so a recording shows any frame lost, repeated or moved.
final class RampNode: AudioNode, @unchecked Sendable {
    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        for frame in 0..<frameCount {
            let value = Float((time.sampleTime + Int64(frame)) & 0xFFFF) / 65_536
            output.channel(0)[frame] = value
            output.channel(1)[frame] = -value / 2
        }
    }
}

/// Every test here that opens a JACK client in this process (libjack serves one server per
/// process: tests on servers of their own must not overlap).
@Suite("JACK output and MIDI input against a real server (jackd -d dummy)", .serialized)
struct JACKOutputTests {
    func server() throws -> JACKServer { try JACKServer.started() }

    /// A ramp through an engine into a JACK client of `server`, started.
    func playingRamp(on server: JACKServer) throws -> (AudioEngine, JACKOutput) {
        let engine = AudioEngine()
        let ramp = RampNode(name: "ramp")
        try engine.attach(ramp)
        try engine.connect(ramp, to: engine.mainMixerNode)
        let output = try JACKOutput(
            engine: engine, configuration: .init(clientName: "pianola", serverName: server.name))
        engine.outputDevice = output
        try output.start()
        return (engine, output)
    }

    @Test("the engine plays through JACK: ports registered and connected, every frame in order in a recording")
    func playsEveryFrame() throws {
        let server = try server()
        let (engine, output) = try playingRamp(on: server)
        #expect(
            output.sampleRate == 48_000 && output.periodFrames == server.periodFrames && engine.currentSampleTime >= 0)
        #expect(output.portNames == ["pianola:out_1", "pianola:out_2"])
        #expect(server.connections(of: "pianola:out_1") == ["system:playback_1"])
        #expect(server.connections(of: "pianola:out_2") == ["system:playback_2"])
        try withTemporaryFolder("jack") { folder in
            let path = folder + "/capture.wav"
            #expect(server.capture(output.portNames, seconds: 1, to: path) == 0)
            output.close()
            #expect(!server.ports().contains("pianola:out_1"), "the ports left the graph")
            let samples = try readFloatWAVSamples(path)
            let frames = (0..<(samples.count / 2)).map { (samples[2 * $0], samples[2 * $0 + 1]) }
            #expect(frames.count >= 44_000, "\(frames.count) frames recorded")
            // Every frame the one after the frame before (mod 2¹⁶), the right channel −½ the left, exactly.
            let steps = frames.map { (Int($0.0 * 65_536), Int($0.1 * 131_072)) }
            let breaks = (1..<steps.count).filter { steps[$0].0 != (steps[$0 - 1].0 + 1) & 0xFFFF }
            let wrong = frames.indices.filter { frames[$0].1 != -frames[$0].0 / 2 }
            // An xrun (the server's cycle late: the machine busy with other tests) loses a period of
            // what the recorder takes; without one, not a frame may be lost.
            let xruns = output.xrunCount
            if breaks.count > 2 * xruns || !wrong.isEmpty, let first = breaks.first ?? wrong.first {
                let around = steps[max(0, first - 2)..<min(steps.count, first + 3)].map { "\($0)" }
                Issue.record(
                    "\(breaks.count) discontinuities (\(xruns) xruns), \(wrong.count) wrong right-channel frames; at \(first): \(around)"
                )
            }
            #expect(frames.contains { $0.0 != 0 }, "silence recorded")
        }
    }

    @Test("the period raised while playing (jack_bufsize 4096, twice what the engine was prepared for) loses no frame")
    func periodChangedWhilePlaying() throws {
        let server = try server()
        let (_, output) = try playingRamp(on: server)
        defer { output.close() }
        usleep(100_000)
        #expect(server.setPeriod(4_096))
        #expect(output.periodFrames == 4_096 && output.isRunning)
        try withTemporaryFolder("jack") { folder in
            let path = folder + "/bigger.wav"
            #expect(server.capture(output.portNames, seconds: 1, to: path) == 0)
            let samples = try readFloatWAVSamples(path)
            let steps = (0..<(samples.count / 2)).map { Int(samples[2 * $0] * 65_536) }
            let breaks = (1..<steps.count).filter { steps[$0] != (steps[$0 - 1] + 1) & 0xFFFF }.count
            #expect(steps.count >= 40_000 && steps.contains { $0 != 0 }, "\(steps.count) frames recorded")
            #expect(breaks <= 2 * output.xrunCount, "\(breaks) discontinuities, \(output.xrunCount) xruns")
            server.setPeriod(server.periodFrames)
        }
    }

    @Test("in freewheel mode the engine renders as fast as it can, then plays on paced again")
    func freewheel() throws {
        let server = try server()
        let (engine, output) = try playingRamp(on: server)
        defer { output.close() }
        usleep(200_000)
        #expect(!output.isFreewheeling)
        let before = engine.currentSampleTime
        let started = Date()
        #expect(server.setFreewheel(true))
        usleep(500_000)
        #expect(output.isFreewheeling && output.isRunning)
        #expect(server.setFreewheel(false))
        let rendered = Double(engine.currentSampleTime - before)
        let realTime = Date().timeIntervalSince(started) * 48_000
        #expect(rendered > 2 * realTime, "\(Int(rendered)) frames in \(Int(realTime)) frames of real time")
        usleep(200_000)
        #expect(!output.isFreewheeling && output.isRunning && output.failure == nil)
        // Paced again: about real time.
        let paced = engine.currentSampleTime
        usleep(500_000)
        let pacedFrames = Double(engine.currentSampleTime - paced)
        #expect(pacedFrames < 2 * 24_000, "\(Int(pacedFrames)) frames in half a second after freewheeling")
    }

    @Test("no server: one line that says how to start one; a server killed while playing: the output says so")
    func serverAbsentOrGone() throws {
        let engine = AudioEngine()
        #expect {
            try JACKOutput(engine: engine, configuration: .init(serverName: "pianola-no-such-server"))
        } throws: { error in
            "\(error)".contains("no JACK server named 'pianola-no-such-server' is running: start one (`jackd")
        }
        let server = try server()
        let ramp = RampNode(name: "ramp")
        try engine.attach(ramp)
        try engine.connect(ramp, to: engine.mainMixerNode)
        let output = try JACKOutput(engine: engine, configuration: .init(serverName: server.name))
        engine.outputDevice = output
        try output.start()
        usleep(200_000)
        #expect(output.isRunning && engine.currentSampleTime > 0)
        server.kill()
        var waited = 0
        while output.isRunning && waited < 100 {
            usleep(50_000)
            waited += 1
        }
        #expect(!output.isRunning, "still running after the server was killed")
        #expect(output.failure.map { "\($0)".hasPrefix("the JACK server stopped the stream") } == true)
        output.close()
    }
}
