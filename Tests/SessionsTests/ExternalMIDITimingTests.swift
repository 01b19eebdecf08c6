import AudioGraph
import Foundation
import MIDICore
import Synchronization
import TestSupport
import Testing

@testable import Sessions

/// A device clock whose accounts of when a frame is heard carry a given error per account.
private final class NoisyClock: AudioPresentationClock, @unchecked Sendable {
    /// CLOCK_MONOTONIC at sample time 0 (the truth), nanoseconds.
    let origin: Double
    let sampleRate = 48_000.0
    let errors: [Double]
    let account = Atomic<Int>(0)
    let breaks = Atomic<Int>(0)
    init(origin: Double, errors: [Double]) {
        self.origin = origin
        self.errors = errors
    }
    func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64? {
        let index = account.load(ordering: .relaxed)
        return UInt64(origin + Double(sampleTime) / sampleRate * 1e9 + errors[index % errors.count])
    }
    var discontinuityCount: Int { breaks.load(ordering: .relaxed) }
}

@Suite("External MIDI timing: a line through the device's accounts")
struct ExternalMIDITimingTests {
    /// An engine whose sample time advances by `frames` per call to `advance`.
    struct Rig {
        let engine = AudioEngine()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 1_024)
        init() throws {
            let sink = RecordingNode()
            try engine.attach(sink)
            try engine.connect(sink, to: engine.mainMixerNode)
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 1_024)
        }
        func advance() throws { try engine.renderOffline(frameCount: 1_024, into: buffer) }
    }

    @Test("the line takes the earliest account: stalls of milliseconds leave it within 0.1 ms of the truth")
    func earliestAccount() throws {
        let rig = try Rig()
        // Accounts are late by the time it took to read them: 0-50 µs, and every fifth a stall of
        // 2-14 ms (a mean would move by a third of a millisecond or more).
        let errors = (0..<64).map { (index: Int) -> Double in
            index % 5 == 2 ? Double(2 + index % 13) * 1e6 : Double(index % 6) * 10_000
        }
        let clock = NoisyClock(origin: 5e9, errors: errors)
        var line = SampleClock(sampleRate: 48_000)
        line.update(engine: rig.engine, clock: clock)
        #expect(line.isProvisional, "no frame rendered yet: a guess")
        for index in 0..<40 {
            try rig.advance()
            clock.account.store(index, ordering: .relaxed)
            line.update(engine: rig.engine, clock: clock)
            line.update(engine: rig.engine, clock: clock)  // the same account twice counts once
        }
        #expect(!line.isProvisional && line.accounts == 40)
        let sample: Int64 = 100_000
        let truth = 5e9 + Double(sample) / 48_000 * 1e9
        let error = Double(line.time(ofSampleTime: sample)) - truth
        #expect(error > -1_000 && error < 100_000, "off by \(error / 1e6) ms")
        // A break in the stream: the line starts over from the next account.
        clock.breaks.store(1, ordering: .relaxed)
        try rig.advance()
        line.update(engine: rig.engine, clock: clock)
        #expect(line.accounts == 1)
    }

    @Test("without a device clock, the guess is now plus the buffer for the frame being rendered")
    func guessWithoutClock() throws {
        let rig = try Rig()
        try rig.advance()
        var line = SampleClock(sampleRate: 48_000)
        let before = MIDITimestamp.now()
        line.update(engine: rig.engine, clock: nil)
        let time = line.time(ofSampleTime: rig.engine.currentSampleTime)
        #expect(line.isProvisional)
        #expect(time >= before && time < MIDITimestamp.now() + 1_000_000)
    }
}
