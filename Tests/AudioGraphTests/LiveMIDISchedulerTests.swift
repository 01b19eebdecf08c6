import AudioGraph
import MIDICore
import Synchronization
import TestSupport
import Testing

/// Records what a scheduler hands it: the absolute frame of each message.
final class RecordingNode: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    init() { super.init(name: "recording") }

    var quantumStart: Int64 = 0
    var received: [(frame: Int64, message: MIDIMessage)] = []
    var sysEx: [[UInt8]] = []

    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        received.append((quantumStart + Int64(frameOffset), message))
    }

    func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        sysEx.append(Array(payload))
        received.append((quantumStart + Int64(frameOffset), .systemExclusive(Array(payload))))
    }
}

/// A simulated clock the test moves by hand.
final class SimulatedClock: Sendable {
    let nanoseconds = Atomic<UInt64>(1_000_000_000)
    func read() -> UInt64 { nanoseconds.load(ordering: .relaxed) }
    func set(_ value: UInt64) { nanoseconds.store(value, ordering: .relaxed) }
}

@Suite("LiveMIDIScheduler")
struct LiveMIDISchedulerTests {
    let rate = 48_000.0

    @Test("events arriving anywhere in a period get the same latency: no jitter from the period or wake-ups")
    func zeroJitter() {
        var generator = SplitMix(seed: 7)
        let clock = SimulatedClock()
        let queue = MIDIEventQueue(capacity: 1_024)
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(
            queues: [queue], destination: node, delay: .milliseconds(1), clock: { clock.read() })
        let period = 256
        let quantum = 64
        let start: UInt64 = 1_000_000_000
        var frame: Int64 = 0
        var sent: [UInt64] = []
        for periodIndex in 0..<2_000 {
            // The device wants period k at its start time; the audio thread wakes 0–2 ms late
            // (every tenth period exactly on time), and renders the period's quanta in a burst.
            let ideal = start + UInt64(Double(periodIndex * period) / rate * 1e9)
            let late = periodIndex % 10 == 0 ? 0 : Double.random(in: 0...0.002, using: &generator)
            var now = ideal + UInt64(late * 1e9)
            // Events that arrived before this wake-up (at random times) are in the queue.
            if periodIndex >= 100 {
                let arrival = now - UInt64(Double.random(in: 0.0001..<0.005, using: &generator) * 1e9)
                if arrival > (sent.last ?? 0) {
                    queue.push(.noteOn(channel: 0, note: 60, velocity: 100), arrival: arrival)
                    sent.append(arrival)
                }
            }
            for _ in 0..<(period / quantum) {
                clock.set(now)
                node.quantumStart = frame
                scheduler.willRender(frameCount: quantum, at: AudioTime(sampleTime: frame, sampleRate: rate))
                frame += Int64(quantum)
                now += 20_000
            }
        }
        #expect(node.received.count == sent.count)
        #expect(scheduler.lateCount == 0)
        // Latency in frames: placed frame minus arrival time on the stream's clock.
        var latencies: [Double] = []
        for (received, arrival) in zip(node.received, sent) {
            let arrivalFrame = Double(arrival - start) / 1e9 * rate
            latencies.append(Double(received.frame) - arrivalFrame)
        }
        let spread = (latencies.max() ?? 0) - (latencies.min() ?? 0)
        #expect(spread <= 1.5, "latency varies by \(spread) frames")
        // The latency is the delay plus the period the render runs ahead (frames before the
        // device plays them): here about 1 ms + 256 frames.
        let mean = latencies.reduce(0, +) / Double(latencies.count)
        #expect(abs(mean - (0.001 * rate + Double(period))) < 4, "mean latency \(mean) frames")
    }

    /// Runs a scheduler against a device that wants period k at `start + k × period / (rate ×
    /// speed)` (a `speed` above 1 is a device clock running fast against the system's), with the
    /// audio thread waking `wake(k)` seconds late; from period 200 on, one note arrives between
    /// each render and the next. The latency of each note in frames of the stream's clock.
    func latencies(periods: Int, speed: Double = 1, wake: (Int, inout SplitMix) -> Double) -> [Double] {
        var generator = SplitMix(seed: 11)
        let clock = SimulatedClock()
        let queue = MIDIEventQueue(capacity: 8_192)
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(
            queues: [queue], destination: node, delay: .milliseconds(1), clock: { clock.read() })
        let period = 256
        let start: UInt64 = 1_000_000_000
        var frame: Int64 = 0
        var lastRender = start - 1
        var sent: [UInt64] = []
        for periodIndex in 0..<(periods + 20) {
            let ideal = Double(periodIndex * period) / (rate * speed)
            var now = start + UInt64((ideal + wake(periodIndex, &generator)) * 1e9)
            if periodIndex >= 200 && periodIndex < periods {
                // Arrived since the last quantum was rendered (an input thread queues it at once).
                let arrival = UInt64.random(in: (lastRender + 1)..<now, using: &generator)
                if arrival > (sent.last ?? 0) {
                    queue.push(.noteOn(channel: 0, note: 60, velocity: 100), arrival: arrival)
                    sent.append(arrival)
                }
            }
            for _ in 0..<(period / 64) {
                clock.set(now)
                node.quantumStart = frame
                scheduler.willRender(frameCount: 64, at: AudioTime(sampleTime: frame, sampleRate: rate))
                frame += 64
                lastRender = now
                now += 20_000
            }
        }
        #expect(node.received.count == sent.count)
        #expect(scheduler.lateCount == 0)
        let result = zip(node.received, sent).map { received, arrival in
            Double(received.frame) - Double(arrival - start) / 1e9 * rate * speed
        }
        return result
    }

    @Test("a second in which every wake-up is late (a loaded or virtual machine) does not move notes")
    func steadyWhenWakeUpsAreLateForAWhile() {
        // Wake-ups 0.3–2.3 ms late, then for 1.5 s 2.3–4.3 ms late, alternately, for 21 s: the
        // minimum of the last second rises by 2 ms each second stretch. A map that followed it
        // would shift notes by 2 ms (96 frames) against each other.
        let found = latencies(periods: 4_000) { index, generator in
            let lateStretch = (index / 280) % 2 == 1
            return (lateStretch ? 0.0023 : 0.0003) + Double.random(in: 0...0.002, using: &generator)
        }
        let spread = (found.max() ?? 0) - (found.min() ?? 0)
        #expect(spread <= 20, "latency varies by \(spread) frames")
    }

    @Test("a device clock 150 ppm fast or slow against the system's: the latency stays put")
    func followsDrift() {
        for speed in [1.000_15, 0.999_85] {
            // 40 s: unfollowed, the drift would move the latency by 6 ms (288 frames).
            let found = latencies(periods: 7_500, speed: speed) { index, generator in
                index % 10 == 0 ? 0 : Double.random(in: 0...0.002, using: &generator)
            }
            let spread = (found.max() ?? 0) - (found.min() ?? 0)
            #expect(spread <= 12, "speed \(speed): latency varies by \(spread) frames")
        }
    }

    @Test("after an underrun (the stream resumes 50 ms later) the latency returns to what it was")
    func followsUnderruns() {
        let clock = SimulatedClock()
        let queue = MIDIEventQueue(capacity: 1_024)
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(
            queues: [queue], destination: node, delay: .milliseconds(1), clock: { clock.read() })
        let period = 256
        var frame: Int64 = 0
        var sent: [UInt64] = []
        var gap: UInt64 = 0
        for periodIndex in 0..<1_000 {
            if periodIndex == 300 { gap = 50_000_000 }  // the device ran dry for 50 ms
            let wake = 1_000_000_000 + UInt64(Double(periodIndex * period) / rate * 1e9) + gap
            queue.push(.noteOn(channel: 0, note: 60, velocity: 100), arrival: wake - 2_000_000)
            sent.append(wake - 2_000_000)
            var now = wake
            for _ in 0..<(period / 64) {
                clock.set(now)
                node.quantumStart = frame
                scheduler.willRender(frameCount: 64, at: AudioTime(sampleTime: frame, sampleRate: rate))
                frame += 64
                now += 20_000
            }
        }
        // Latency: placed frame against arrival, each on its own stretch of the stream clock.
        func latency(_ index: Int) -> Double {
            let arrivalFrame = Double(sent[index] - 1_000_000_000 - (index >= 300 ? 50_000_000 : 0)) / 1e9 * rate
            return Double(node.received[index].frame) - arrivalFrame
        }
        #expect(node.received.count == sent.count)
        let before = latency(250)
        let after = latency(999)
        #expect(abs(after - before) <= 1.5, "latency \(before) frames before the underrun, \(after) after")
    }

    @Test("an event that arrives too late for its frame plays at the start of the next quantum and is counted")
    func lateEvents() {
        let clock = SimulatedClock()
        let queue = MIDIEventQueue()
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(queues: [queue], destination: node, delay: .zero, clock: { clock.read() })
        clock.set(2_000_000_000)
        scheduler.willRender(frameCount: 64, at: AudioTime(sampleTime: 0, sampleRate: rate))
        queue.push(.noteOn(channel: 0, note: 1, velocity: 1), arrival: 1_000_000_000)  // a second ago
        clock.set(2_001_333_334)
        node.quantumStart = 64
        scheduler.willRender(frameCount: 64, at: AudioTime(sampleTime: 64, sampleRate: rate))
        #expect(node.received.map { $0.frame } == [64])
        #expect(scheduler.lateCount == 1)
    }

    @Test("several queues merge in time order; SysEx goes through the raw-bytes path")
    func mergesQueues() {
        let clock = SimulatedClock()
        let queues = [MIDIEventQueue(), MIDIEventQueue()]
        let node = RecordingNode()
        let scheduler = LiveMIDIScheduler(queues: queues, destination: node, delay: .zero, clock: { clock.read() })
        clock.set(1_000_000_000)
        scheduler.willRender(frameCount: 480, at: AudioTime(sampleTime: 0, sampleRate: rate))
        // Arrivals 1, 2, 3, 4 ms after the first render (48 frames per ms), alternating queues.
        queues[1].push(.controlChange(channel: 0, controller: 7, value: 1), arrival: 1_001_000_000)
        queues[0].push(.systemExclusive([0x7E, 0x7F, 0x09, 0x01]), arrival: 1_002_000_000)
        queues[1].push(.controlChange(channel: 0, controller: 7, value: 3), arrival: 1_003_000_000)
        queues[0].push(.controlChange(channel: 0, controller: 7, value: 4), arrival: 1_004_000_000)
        clock.set(1_010_000_000)
        node.quantumStart = 480
        scheduler.willRender(frameCount: 480, at: AudioTime(sampleTime: 480, sampleRate: rate))
        #expect(node.received.count == 4)
        let frames = node.received.map { $0.frame }
        #expect(frames == frames.sorted())
        #expect(node.sysEx == [[0x7E, 0x7F, 0x09, 0x01]])
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $1 - $0 == 48 })
    }
}
