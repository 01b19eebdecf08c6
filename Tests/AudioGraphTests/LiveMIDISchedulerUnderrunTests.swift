import AudioGraph
import MIDICore
import Synchronization
import TestSupport
import Testing

/// An output the test drives as ALSA's behaves: frames play from `playStart` (ns), `firstFrame`
/// first, on the current stretch of the stream; after each period written while playing it
/// publishes its account (when the frame being played was, and how far it has written), which
/// times the frames written so far. An underrun starts a new stretch, which plays only once the
/// buffer is full again.
final class SimulatedOutput: AudioPresentationClock, @unchecked Sendable {
    let rate: Double
    let bufferFrames: Int
    var breaks = 0
    /// The current stretch.
    var playStart: UInt64 = 0
    var firstFrame: Int64 = 0
    /// Every stretch, for the true time of any frame.
    var stretches: [(firstFrame: Int64, playStart: UInt64)] = []
    /// The last account published: when, up to which frame written, and the frame playing then.
    private var account: (time: UInt64, end: Int64, playing: Double)?

    init(rate: Double, bufferFrames: Int) {
        self.rate = rate
        self.bufferFrames = bufferFrames
    }

    func startStretch(firstFrame: Int64, playStart: UInt64) {
        self.firstFrame = firstFrame
        self.playStart = playStart
        stretches.append((firstFrame, playStart))
    }

    /// After a period is written at `time`, up to `end`: the account, if the stream plays.
    func publish(at time: UInt64, end: Int64) {
        guard time >= playStart else { return }
        account = (time, end, Double(firstFrame) + Double(time - playStart) / 1e9 * rate)
    }

    /// When the frame truly plays.
    func truePresentation(of frame: Int64) -> UInt64 {
        let stretch = stretches.last { $0.firstFrame <= frame } ?? stretches[0]
        return stretch.playStart + UInt64(Double(frame - stretch.firstFrame) / rate * 1e9)
    }

    func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64? {
        guard let account, sampleTime < account.end else { return nil }
        return UInt64(Int64(account.time) + Int64((Double(sampleTime) - account.playing) / rate * 1e9))
    }
    var discontinuityCount: Int { breaks }
    var bufferDuration: Double { Double(bufferFrames) / rate }
}

@Suite("LiveMIDIScheduler: note latencies across underruns")
struct LiveMIDISchedulerUnderrunTests {
    @Test(
        "a note's latency is timed by the account of the stretch that plays it: across underruns, every latency is the true one, none under the buffer"
    )
    func latenciesAcrossUnderruns() {
        let rate = 48_000.0
        let period = 256
        let buffer = period * 2
        let output = SimulatedOutput(rate: rate, bufferFrames: buffer)
        let clock = SimulatedClock()
        let queue = MIDIEventQueue(capacity: 8_192)
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(
            queues: [queue], destination: node, delay: .milliseconds(1), clock: { clock.read() })
        scheduler.presentationClock = output
        var generator = SplitMix(seed: 5)
        var frame: Int64 = 0
        var sent: [UInt64] = []
        var now: UInt64 = 1_000_000_000
        func note(arrivingWithin range: ClosedRange<UInt64>) {
            let arrival = now - UInt64.random(in: range, using: &generator)
            guard arrival > (sent.last ?? 0) else { return }
            queue.push(.noteOn(channel: 0, note: 60, velocity: 100), arrival: arrival)
            sent.append(arrival)
        }
        /// One period, rendered as 64-frame quanta 20 µs apart, then written.
        func renderPeriod() {
            for _ in 0..<(period / 64) {
                clock.set(now)
                node.quantumStart = frame
                scheduler.willRender(frameCount: 64, at: AudioTime(sampleTime: frame, sampleRate: rate))
                frame += 64
                now += 20_000
            }
            output.publish(at: now, end: frame)
        }
        /// A stream (re)starting: two periods back to back; it plays once they are written.
        func refill() {
            output.startStretch(firstFrame: frame, playStart: now + UInt64(2 * period / 64) * 20_000)
            for _ in 0..<2 {
                note(arrivingWithin: 1_000...19_000)
                renderPeriod()
            }
        }
        refill()
        for index in 0..<3_000 {
            if index % 500 == 250 {
                // The thread stalls 30 ms; notes keep arriving; the device ran dry: a new stretch.
                for _ in 0..<5 {
                    now += 6_000_000
                    note(arrivingWithin: 1_000...5_000_000)
                }
                output.breaks += 1
                refill()
                continue
            }
            // Steady: a period's room appears as the device plays one; the thread wakes 0–2 ms late.
            let room = output.truePresentation(of: frame - Int64(buffer) + Int64(period))
            now = max(now, room + UInt64.random(in: 0...2_000_000, using: &generator))
            if Bool.random(using: &generator) { note(arrivingWithin: 1_000...900_000) }
            renderPeriod()
        }
        let measured = scheduler.noteLatencies
        // Every note placed is timed (the last one or two, due after the last quantum, wait).
        #expect(measured.count == node.received.count && node.received.count >= sent.count - 2 && sent.count > 1_000)
        var worst = 0.0
        for (index, latency) in measured.enumerated() where index < node.received.count {
            let block = (node.received[index].frame + 63) / 64 * 64
            let truth = Double(output.truePresentation(of: block) - sent[index]) / 1e6
            worst = max(worst, abs(latency - truth))
        }
        #expect(worst < 0.01, "a measured latency is \(worst) ms off the true one")
        let floor = Double(buffer) / rate * 1_000
        let earliest = measured.min() ?? 0
        #expect(earliest >= floor, "a note sounded \(earliest) ms after it arrived: under the \(floor) ms buffer")
    }
}
