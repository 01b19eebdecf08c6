import Testing

@testable import AudioGraph

@Suite("Sizes out of range: an audio buffer and a power meter clamp them instead of trapping")
struct ClampedSizeTests {
    @Test("AudioBuffer: no channels or no frames (or fewer) make a buffer of one channel and one frame")
    func audioBufferClamps() {
        for (channels, frames) in [(0, 512), (2, 0), (-1, -1), (Int.min, 1)] {
            let buffer = AudioBuffer(channelCount: channels, frameCapacity: frames)
            #expect(buffer.channelCount == max(1, channels), "\(channels) × \(frames)")
            #expect(buffer.frameCapacity == max(1, frames) && buffer.frameLength == buffer.frameCapacity)
            buffer.channel(0)[0] = 0.5
            #expect(buffer.samples(channel: 0).first == 0.5)
            buffer.clear(frames: .max)
            #expect(buffer.interleaved().allSatisfy { $0 == 0 })
        }
    }

    @Test("PowerMeter: channels clamp to 1…8, a window to 1 frame or more, and any hold time is taken")
    func powerMeterClamps() {
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
        for frame in 0..<64 { buffer.channel(0)[frame] = 0.5 }
        let cases: [(channels: Int, window: Int, hold: Double, expectedChannels: Int, expectedWindow: Int)] = [
            (0, 0, 1.5, 1, 1), (9, -5, .nan, 8, 1), (-3, 64, .infinity, 1, 64), (Int.max, Int.min, -1, 8, 1),
        ]
        for item in cases {
            let meter = PowerMeter(
                channelCount: item.channels, sampleRate: 48_000, windowFrames: item.window, holdSeconds: item.hold)
            #expect(meter.channelCount == item.expectedChannels, "\(item.channels) channels")
            #expect(meter.windowFrames == item.expectedWindow, "window of \(item.window)")
            meter.process(buffer, frameCount: 64, time: AudioTime(sampleTime: 0, sampleRate: 48_000))
            let reading = meter.reading()
            #expect(reading.endFrame == 64)
            #expect(reading.peakPower.count == item.expectedChannels)
            #expect(abs(reading.peakPower[0] - PowerMeter.decibels(0.5)) < 1e-4)
        }
    }
}
