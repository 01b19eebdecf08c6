import Foundation
import Pianola
import Testing

let checkoutRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// A sampler with the bundled font, playing the demo song, in an engine. Without `effects`,
/// the synthesizer's reverb and chorus are off (the chorus LFO's phase depends on how long the
/// synthesizer has run, so a stream that seeks cannot match a fresh render with it on).
func demoGraph(effects: Bool = true) throws -> (AudioEngine, MusicPlayer) {
    let engine = AudioEngine()
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = effects
    settings.isChorusEnabled = effects
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: checkoutRoot + "/SoundFonts/PianolaGM.sf2")
    try engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)
    let sequence = try MusicSequence(path: checkoutRoot + "/Examples/demo-song.mid")
    let player = MusicPlayer(sequence: sequence, destination: sampler)
    try engine.addRenderObserver(player)
    return (engine, player)
}

@Suite("ALSA output", .serialized)
struct ALSAOutputTests {
    @Test(
        "the stream sent to a device is exactly the offline render (ALSA file plugin over null)",
        arguments: [(256, 2), (1024, 4)])
    func deviceStreamEqualsOfflineRender(period: Int, periods: Int) throws {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-alsa-\(UUID().uuidString).raw")
            .path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let (engine, player) = try demoGraph()
        var configuration = ALSAOutput.Configuration()
        configuration.device = "file:FILE=\(raw),FORMAT=raw"
        configuration.periodFrames = period
        configuration.periodCount = periods
        let output = try ALSAOutput(engine: engine, configuration: configuration)
        #expect(output.sampleFormat == .float32)
        #expect(output.periodFrames == period)
        player.play()
        try output.start()
        let deadline = Date().addingTimeInterval(60)
        while !player.isFinished && Date() < deadline { usleep(10_000) }
        usleep(50_000)
        output.stop()
        #expect(player.isFinished)
        #expect(output.failure == nil)
        let captured = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }

        let expected = try offlineDemo(frames: 44_100 * 16, period: period, effects: true)
        #expect(captured.count >= expected.count, "captured \(captured.count / 2) frames")
        let common = min(captured.count, expected.count)
        let mismatches = zip(captured[0..<common], expected[0..<common]).filter { $0 != $1 }.count
        #expect(mismatches == 0, "\(mismatches) samples differ")
        #expect(expected.contains { abs($0) > 0.05 }, "the music is there")
    }

    @Test("a four-channel stream carries the song on the channels it is routed to and silence on the rest")
    func fourChannelStream() throws {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-quad-\(UUID().uuidString).raw")
            .path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let (engine, player) = try demoGraph(effects: false)
        try engine.connect(engine.mainMixerNode, to: engine.outputNode, channels: [2, 3])
        let output = try ALSAOutput(
            engine: engine,
            configuration: .init(device: "file:FILE=\(raw),FORMAT=raw", periodFrames: 512, channelCount: 4))
        #expect(output.channelCount == 4)
        player.play()
        try output.start()
        #expect(engine.format?.channelCount == 4)
        let deadline = Date().addingTimeInterval(60)
        while !player.isFinished && Date() < deadline { usleep(10_000) }
        usleep(50_000)
        output.stop()
        #expect(output.failure == nil)
        let captured = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }
        let expected = try offlineDemo(frames: 44_100 * 16, period: 512)
        let frames = min(captured.count / 4, expected.count / 2)
        #expect(frames >= 44_100 * 16, "captured \(captured.count / 4) frames")
        var silentChannelsPeak: Float = 0
        var mismatches = 0
        for frame in 0..<frames {
            silentChannelsPeak = max(silentChannelsPeak, abs(captured[4 * frame]), abs(captured[4 * frame + 1]))
            if captured[4 * frame + 2] != expected[2 * frame] || captured[4 * frame + 3] != expected[2 * frame + 1] {
                mismatches += 1
            }
        }
        #expect(silentChannelsPeak == 0, "outputs 1-2 peak at \(silentChannelsPeak)")
        #expect(mismatches == 0, "\(mismatches) frames of outputs 3-4 differ from the stereo render")
        #expect(expected.contains { abs($0) > 0.05 }, "the music is there")
    }

    @Test("a device that does not exist, or a period out of range, is one clear error")
    func badDevices() throws {
        let engine = AudioEngine()
        var configuration = ALSAOutput.Configuration()
        configuration.device = "hw:57,0"
        #expect(throws: ALSAPCMError.self) { try ALSAOutput(engine: engine, configuration: configuration) }
        configuration.device = "null"
        configuration.periodFrames = 16
        do {
            _ = try ALSAOutput(engine: engine, configuration: configuration)
            Issue.record("a 16-frame period was accepted")
        } catch {
            #expect(error.description == "audio device 'null': period must be 32…8192 frames")
        }
        configuration.periodFrames = 256
        configuration.channelCount = 65
        #expect(throws: ALSAPCMError.unsupportedConfiguration(device: "null", reason: "channels must be 1…64")) {
            try ALSAOutput(engine: engine, configuration: configuration)
        }
    }

    @Test("ALSA's null device: unpaced, its output thread is not real-time; kept to the clock, it plays in real time")
    func nullDeviceIsNotPaced() throws {
        // A SCHED_FIFO thread that never waits (the null device takes periods as fast as they are
        // rendered) would starve the machine: a few such outputs on two cores stalled another
        // program's start-up for half a minute.
        let engine = AudioEngine()
        var configuration = ALSAOutput.Configuration()
        configuration.device = "null"
        let output = try ALSAOutput(engine: engine, configuration: configuration)
        #expect(!output.isPaced)
        try output.start()
        #expect(output.isRunning && !output.isRealTimeScheduled)
        output.stop()
        output.close()

        // (A capture from null is kept to the clock by `AudioInputClock`: see the clock pacer's tests.)
        let input = try AudioInputNode(configuration: .init(device: "null"))
        #expect(!input.isPaced)
        input.close()

        // Kept to the clock (as a live session keeps it): real time, the thread waiting.
        let paced = AudioEngine()
        _ = paced.mainMixerNode
        configuration.pacesUnpacedDevice = true
        let clocked = try ALSAOutput(engine: paced, configuration: configuration)
        #expect(clocked.isPaced)
        let start = Date()
        try clocked.start()
        usleep(1_000_000)
        let thread = try #require(clocked.audioThreadID)
        let busy = threadCPUSeconds(thread)
        let seconds = Date().timeIntervalSince(start)
        let rendered = Double(paced.currentSampleTime) / clocked.sampleRate
        clocked.stop()
        // At most the time elapsed and a buffer ahead; at least half of it (a busy machine).
        #expect(rendered <= seconds + clocked.bufferLatency + 0.01, "\(rendered) s rendered in \(seconds) s")
        #expect(rendered >= seconds / 2, "\(rendered) s rendered in \(seconds) s")
        // Unpaced, the thread is on the CPU all the time.
        #expect(busy < seconds / 2, "the audio thread ran \(busy) s of \(seconds) s")
        clocked.close()
        configuration.pacesUnpacedDevice = false

        // The file plugin is taken as paced: it writes to whatever its file is (a FIFO a reader
        // drains at the device's rate, as the VM's and the tests' recipes have it).
        configuration.device = "file:FILE=/dev/null,FORMAT=raw"
        #expect(try ALSAOutput(engine: AudioEngine(), configuration: configuration).isPaced)
    }
}

/// CPU time a thread of this process has used, in seconds (`/proc`: user and system ticks).
func threadCPUSeconds(_ thread: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return .infinity }
    // After "pid (name)": state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticks = (Double(fields[11]) ?? .infinity) + (Double(fields[12]) ?? .infinity)
    return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
}
