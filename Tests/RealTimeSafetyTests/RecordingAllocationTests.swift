import CAllocationCounter
import Foundation
import Pianola
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Real-time safety: recording", .serialized)
struct RecordingAllocationTests {
    @Test("capture, effects, meters and the file tap make no heap allocation on the render thread")
    func renderPathAllocatesNothing() throws {
        try withTemporaryFolder("recording-allocation") { folder in
            let device = try FileCaptureDevice.make(samples: numberedFrames(48_000 * 4), in: folder)
            let input = try AudioInputNode(
                configuration: .init(
                    device: device.name, sampleRate: 48_000, channelCount: 2, periodFrames: 256, periodCount: 3,
                    definitions: device.definitions))
            let engine = AudioEngine()
            let eq = EQNode(numberOfBands: 2)
            try engine.attach(input)
            try engine.attach(eq)
            try engine.connect(input, to: eq)
            try engine.connect(eq, to: engine.mainMixerNode)
            let meter = PowerMeter(channelCount: 2, sampleRate: 48_000, windowFrames: 1_000)
            let tap = try AudioFileTap(path: folder + "/take.wav", channelCount: 2, sampleRate: 48_000)
            try engine.installTap(on: eq, meter)
            try engine.installTap(on: eq, tap)
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
            tap.record()
            for _ in 0..<20 { engine.render(frameCount: 256, into: buffer) }
            var allocations = 0
            for quantum in 0..<500 {
                if quantum == 200 { tap.pause() }
                if quantum == 300 { tap.record() }
                pianola_allocations_start()
                engine.render(frameCount: 256, into: buffer)
                allocations += pianola_allocations_stop()
            }
            try tap.finish()
            input.close()
            #expect(allocations == 0, "\(allocations) allocations in 500 quanta")
            #expect(tap.writtenFrameCount == 420 * 256)
            #expect(meter.reading().averagePower[0] > -60, "the meter measured the input")
        }
    }

    @Test("a recorder's audio threads (capture clock; full duplex with a monitor) allocate nothing after warm-up")
    func recorderThreadsAllocateNothing() throws {
        for monitoring in [false, true] {
            try withTemporaryFolder("recording-allocation") { folder in
                let feeder = PacedFeeder(
                    folder: folder, samples: numberedFrames(48_000 * 6), rate: 48_000, channels: 2, speed: 2)
                var configuration = AudioRecorder.Configuration(
                    input: .init(
                        device: feeder.device.name, sampleRate: 48_000, channelCount: 2, periodFrames: 256,
                        periodCount: 3, definitions: feeder.device.definitions),
                    effects: [try EffectSpec.parse("eq:type=highShelf,freq=8000,gain=-6")])
                if monitoring {
                    configuration.monitor = ALSAOutput.Configuration(
                        device: "null", sampleRate: 48_000, periodFrames: 256, periodCount: 2)
                }
                let recorder = try AudioRecorder(path: folder + "/take.wav", configuration: configuration)
                try recorder.record()
                usleep(500_000)
                let thread =
                    monitoring
                    ? recorder.monitorOutput?.audioThreadID
                    : (recorder.engine.outputDevice as? AudioInputClock)?.audioThreadID
                let audioThread = try #require(thread, "the audio thread reports its id")
                // Only that thread is watched: other suites' audio threads run in parallel.
                pianola_allocations_watch_thread(audioThread)
                usleep(700_000)
                _ = recorder.meterReading()
                let allocations = pianola_allocations_stop_watching_thread()
                try recorder.stop()
                #expect(allocations == 0, "\(allocations) allocations (monitoring: \(monitoring))")
                #expect(recorder.currentTime > 0.5)
            }
        }
    }

    @Test("an output's audio thread keeping ALSA's null device to the clock allocates nothing after warm-up")
    func pacedNullOutputAllocatesNothing() throws {
        let engine = AudioEngine()
        _ = engine.mainMixerNode
        let output = try ALSAOutput(
            engine: engine,
            configuration: .init(device: "null", sampleRate: 48_000, periodFrames: 256, pacesUnpacedDevice: true))
        try output.start()
        defer { output.stop() }
        let (allocations, rendered) = try watchedAfterWarmUp(output.audioThreadID) { Int(engine.currentSampleTime) }
        #expect(allocations == 0, "\(allocations) allocations")
        // About 0.7 s of periods went by while watched (not a burst of an unpaced device's).
        #expect(rendered > 0 && rendered < 48_000, "\(rendered) frames in 0.7 s")
    }

    /// After 0.3 s of warm-up, the allocations `thread` makes in 0.7 s, and how far `frames` went.
    func watchedAfterWarmUp(_ thread: Int32?, frames: () -> Int) throws -> (allocations: Int, frames: Int) {
        usleep(300_000)
        let thread = try #require(thread, "the audio thread reports its id")
        let before = frames()
        pianola_allocations_watch_thread(thread)
        usleep(700_000)
        let allocations = pianola_allocations_stop_watching_thread()
        return (Int(allocations), frames() - before)
    }

    @Test("a capture clock keeping ALSA's null device to the clock allocates nothing after warm-up")
    func pacedNullCaptureAllocatesNothing() throws {
        let input = try AudioInputNode(configuration: .init(device: "null", periodFrames: 256))
        defer { input.close() }
        let engine = AudioEngine()
        try engine.attach(input)
        try engine.connect(input, to: engine.mainMixerNode)
        let clock = engine.driveFromInput(input)
        try clock.start()
        defer { clock.stop() }
        let (allocations, captured) = try watchedAfterWarmUp(clock.audioThreadID) { input.capturedFrameCount }
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(captured > 0 && captured < 48_000, "\(captured) frames in 0.7 s")
    }

    @Test("watching a thread sees its allocations (a test that could fail)")
    func watchingSeesAllocations() throws {
        let id = Atomic<Int32>(0)
        let go = Atomic<Bool>(false)
        let thread = Thread {
            id.store(pianola_allocations_current_thread(), ordering: .releasing)
            while !go.load(ordering: .acquiring) { usleep(1_000) }
            let array = [Int](repeating: 1, count: 1000 + Int.random(in: 0...10))
            precondition(array.count > 999)
        }
        thread.start()
        while id.load(ordering: .acquiring) == 0 { usleep(1_000) }
        pianola_allocations_watch_thread(id.load(ordering: .acquiring))
        go.store(true, ordering: .releasing)
        while !thread.isFinished { usleep(1_000) }
        #expect(pianola_allocations_stop_watching_thread() >= 1)
    }
}
