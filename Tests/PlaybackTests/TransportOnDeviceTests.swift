import Foundation
import Pianola
import Synchronization
import Testing

/// Counts the frames the engine has rendered (the stream's clock, readable from any thread).
final class FrameCounter: RenderObserver {
    let frames = Atomic<Int>(0)
    func willRender(frameCount: Int, at time: AudioTime) { frames.add(frameCount, ordering: .relaxed) }
}

/// Renders the demo song offline in `period`-frame quanta, with `setUp` applied to the player
/// before it starts, until `frames` frames: the reference a device stream is checked against.
func offlineDemo(
    frames: Int, period: Int, effects: Bool = false, setUp: (MusicPlayer) -> Void = { _ in }
) throws -> [Float] {
    let (engine, player) = try demoGraph(effects: effects)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: period)
    setUp(player)
    player.play()
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: period)
    var samples: [Float] = []
    samples.reserveCapacity(frames * 2)
    while samples.count < frames * 2 {
        try engine.renderOffline(frameCount: period, into: buffer)
        samples += buffer.interleaved()
    }
    return samples
}

/// The first frame at or after `start` whose level (either channel) reaches `threshold`.
func firstSound(_ samples: [Float], from start: Int, threshold: Float = 1e-3) -> Int? {
    var frame = start
    while frame * 2 + 1 < samples.count {
        if abs(samples[frame * 2]) >= threshold || abs(samples[frame * 2 + 1]) >= threshold { return frame }
        frame += 1
    }
    return nil
}

@Suite("The transport through the API, on a device stream", .serialized)
struct TransportOnDeviceTests {
    @Test(
        "loop, pause, seek and resume: the captured stream is the offline render, then silence, then the song from the seek point"
    )
    func transportOnCapturedStream() throws {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pianola-transport-\(UUID().uuidString).raw"
        )
        .path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let period = 256
        let rate = 44_100
        let (engine, player) = try demoGraph(effects: false)
        let output = try engine.connectOutput(
            toDevice: .init(device: "file:FILE=\(raw),FORMAT=raw", periodFrames: period))
        #expect(output.sampleFormat == .float32)
        let clock = FrameCounter()
        try engine.addRenderObserver(clock)
        player.setLoop(1.0..<2.5, count: 1)
        player.play()  // before the device starts, so the stream starts with the song
        try engine.start()
        #expect(engine.isRunning)
        // The stream is not paced (the file plugin writes as fast as it is fed), so each step
        // waits for the player to get somewhere rather than for the clock.
        let deadline = Date().addingTimeInterval(60)
        func wait(until condition: () -> Bool) {
            while !condition() && Date() < deadline { usleep(1_000) }
        }
        wait { player.completedLoopCount == 1 && player.currentPositionInSeconds >= 3 }
        player.pause()
        // Ten seconds of stream (however long the machine takes): the released notes die away.
        let pausedAt = clock.frames.load(ordering: .relaxed)
        wait { clock.frames.load(ordering: .relaxed) >= pausedAt + 10 * rate }
        player.seek(toSeconds: 8)
        let resumedAt = clock.frames.load(ordering: .relaxed)  // play() takes effect after this
        player.play()
        wait { player.isFinished }
        usleep(50_000)
        engine.stop()
        #expect(!engine.isRunning)
        #expect(output.failure == nil)
        #expect(player.isFinished && Date() < deadline, "the song played to its end")
        let captured = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }

        // 1. Up to the pause, the stream is exactly the offline render with the same loop.
        let looped = try offlineDemo(frames: rate * 8, period: period) { $0.setLoop(1.0..<2.5, count: 1) }
        let straight = try offlineDemo(frames: rate * 8, period: period)
        let common = min(captured.count, looped.count)
        let pauseFrame = ((0..<common).first { captured[$0] != looped[$0] } ?? common) / 2
        #expect(pauseFrame >= Int(4.5 * Double(rate)), "the stream matched the looped render for \(pauseFrame) frames")
        // (It takes effect at a period's start; the release envelope departs from the first sample on.)
        #expect(pauseFrame % period < 64, "the pause took effect at a period boundary (\(pauseFrame))")
        let loopStart = Int(2.5 * Double(rate))
        #expect(
            looped[loopStart * 2..<pauseFrame * 2] != straight[loopStart * 2..<pauseFrame * 2], "the loop went back")

        // 2. Paused: the notes are released and the stream falls silent.
        guard let resumeSound = firstSound(captured, from: resumedAt) else {
            Issue.record("no sound after the pause")
            return
        }
        let silence = (resumedAt - rate)..<resumedAt
        let silentFrom: Int? = silence.allSatisfy { abs(captured[$0 * 2]) < 1e-4 } ? silence.lowerBound : nil
        #expect(silentFrom != nil, "the second before play() is silent")
        #expect(resumeSound - resumedAt < rate, "the song resumed \(resumeSound - resumedAt) frames after play()")

        // 3. Resumed at 8 s: the stream is the song from 8 s, as an offline render that seeks
        // there first. Aligned on the first sound (give or take a few frames: a voice's first
        // block depends on the voice slot it got), it matches to more than 30 dB; the song from
        // where it was paused does not.
        let fromEight = try offlineDemo(frames: rate * 3, period: period) { $0.seek(toSeconds: 8) }
        let fromPause = try offlineDemo(frames: rate * 3, period: period) { $0.seek(toSeconds: 3) }
        let matchToEight = signalToDifference(reference: fromEight, stream: captured, near: resumeSound)
        let matchToPause = signalToDifference(reference: fromPause, stream: captured, near: resumeSound)
        #expect(matchToEight > 30, "signal-to-difference after the seek: \(matchToEight) dB")
        #expect(matchToPause < 10, "against the song from the pause point: \(matchToPause) dB")
    }

    /// Aligns `reference`'s first sound with the stream's first sound after the pause (trying
    /// shifts of up to 64 frames) and returns the best signal-to-difference ratio over two
    /// seconds, in dB.
    func signalToDifference(reference: [Float], stream: [Float], near streamSound: Int) -> Double {
        guard let referenceSound = firstSound(reference, from: 0) else { return -.infinity }
        let span = 44_100 * 2
        var best = -Double.infinity
        for shift in -64...64 {
            let start = streamSound - referenceSound + shift
            guard start >= 0, (start + span) * 2 <= stream.count, span * 2 <= reference.count else { continue }
            var signal = 0.0
            var difference = 0.0
            for index in 0..<span * 2 {
                let a = Double(reference[index])
                let b = Double(stream[start * 2 + index])
                signal += a * a
                difference += (a - b) * (a - b)
            }
            best = max(best, 10 * log10(signal / max(difference, 1e-30)))
        }
        return best
    }

    @Test("start() without an output device is a typed error")
    func startWithoutDevice() {
        let engine = AudioEngine()
        #expect(throws: AudioGraphError.noOutputDevice) { try engine.start() }
        #expect(!engine.isRunning)
    }
}
