import AudioGraph
import Testing

@testable import Meters

/// A buffer of `frames` frames: `value` on the left channel, −`value` on the right.
private func steady(_ value: Float, frames: Int) -> AudioBuffer {
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    buffer.channel(0).update(repeating: value, count: frames)
    buffer.channel(1).update(repeating: -value, count: frames)
    return buffer
}

private let start = AudioTime(sampleTime: 0, sampleRate: 48_000)

@Suite("The meters: peak, power, loudness and a render's output, one measurement")
struct MeterTests {
    @Test("the shared measurement: the sum of squares and the peak of any count, eight lanes or fewer")
    func levelMeasurement() {
        for count in [0, 1, 7, 8, 9, 64, 1_000] {
            let samples = (0..<count).map { Float(($0 * 37) % 23 - 11) / 16 }
            // (One sample more in storage, so that even an empty run has an address.)
            let (sum, peak) = (samples + [9]).withUnsafeBufferPointer { storage in
                storage.withMemoryRebound(to: Float.self) {
                    LevelMeasurement.sumOfSquaresAndPeak($0.baseAddress.unsafelyUnwrapped, count: count)
                }
            }
            let expectedSum = samples.reduce(Float(0)) { $0 + $1 * $1 }
            #expect(abs(sum - expectedSum) <= 1e-4 * max(1, expectedSum), "\(count)")
            #expect(peak == samples.map(abs).max() ?? 0, "\(count)")
        }
    }

    @Test("PeakMeter: the peak since the last read, the last quantum's RMS, the frames seen")
    func peakMeter() {
        let meter = PeakMeter()
        meter.process(steady(0.5, frames: 64), frameCount: 64, time: start)
        meter.process(steady(0.25, frames: 64), frameCount: 64, time: start)
        #expect(meter.takePeaks() == [0.5, 0.5])
        #expect(meter.takePeaks() == [0, 0])
        #expect(abs(meter.rms[0] - 0.25) < 1e-6 && abs(meter.rms[1] - 0.25) < 1e-6)
        #expect(meter.frameCount == 128)
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

    @Test("PeakAndLoudnessMeter: the peak and the samples over full scale of what is written")
    func peakAndLoudnessMeter() throws {
        let meter = try PeakAndLoudnessMeter(sampleRate: 48_000, measuresLoudness: false)
        let buffer = steady(0.5, frames: 100)
        buffer.channel(0)[10] = 1.5
        buffer.channel(1)[20] = -1.25
        meter.add(buffer, from: 0, frameCount: 100)
        meter.add(steady(0.1, frames: 10), from: 0, frameCount: 10)
        #expect(meter.peak == 1.5)
        #expect(meter.samplesOverFullScale == 2)
        #expect(meter.integratedLoudness == nil)
    }

    @Test("LoudnessMeter: a layout it cannot measure is a typed error that says what")
    func loudnessMeterRefuses() {
        #expect(throws: MeterError.unsupportedLayout(channelCount: 3, sampleRate: 48_000)) {
            try LoudnessMeter(channelCount: 3, sampleRate: 48_000)
        }
        #expect(
            "\(MeterError.unsupportedLayout(channelCount: 2, sampleRate: 1_000))".contains("2 channels at 1000.0 Hz"))
    }
}
