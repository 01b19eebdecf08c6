import Foundation
import Testing

@testable import ALSAIO

@Suite("Clock pacer: an unpaced device kept to real time")
struct ClockPacerTests {
    // 256-frame periods, two in the buffer, at 48 kHz: a period lasts 5.33 ms, the buffer 10.67.

    @Test("the stream starts once the buffer is full; then a period waits until one has played")
    func pacing() {
        var pacer = ClockPacer(sampleRate: 48_000, bufferFrames: 512)
        var late = pacer.waitForRoom(256)
        #expect(!late)
        late = pacer.wrote(256)
        #expect(!late)
        #expect(pacer.delay(at: ClockPacer.now()) == nil, "half a buffer started the stream")
        let before = ClockPacer.now()
        _ = pacer.waitForRoom(256)
        _ = pacer.wrote(256)
        #expect(playing(pacer, since: before), "a full buffer did not start the stream")
        // The third period: room once the first has played, never sooner (an absolute sleep from
        // the stream's start, which came after `before`).
        late = pacer.waitForRoom(256)
        let waited = Double(ClockPacer.now() - before) / 1e9
        #expect(waited >= 256 / 48_000, "waited \(waited * 1000) ms for a period of 5.33 ms")
        _ = pacer.wrote(256)
        if !late, let held = pacer.delay(at: ClockPacer.now()) {
            #expect(held > 0 && held <= 512, "the device holds \(held) frames")
        }
    }

    @Test("a buffer run dry is an underrun, found before the next render or on the write after a slow one")
    func underruns() {
        var pacer = ClockPacer(sampleRate: 48_000, bufferFrames: 512)
        for _ in 0..<2 { _ = pacer.wrote(256) }
        // Idle for longer than the buffer before the next render.
        usleep(30_000)
        let dry = pacer.waitForRoom(256)
        #expect(dry)
        #expect(pacer.delay(at: ClockPacer.now()) == nil, "a stream run dry has no account")
        // Filling again; then a render slower than the buffer: its write finds the stream run dry,
        // and it is the first period of the refill.
        for _ in 0..<2 { _ = pacer.wrote(256) }
        usleep(30_000)
        let slow = pacer.wrote(256)
        #expect(slow)
        #expect(pacer.delay(at: ClockPacer.now()) == nil)
        let before = ClockPacer.now()
        let refilled = pacer.wrote(256)
        #expect(!refilled)
        #expect(playing(pacer, since: before), "two periods written after the break did not start it again")
    }

    @Test("a capture kept to the clock: a period is read once captured; a reader a buffer behind overruns")
    func capture() {
        // A second's buffer: a busy machine keeping this thread away cannot make an overrun.
        var roomy = ClockPacer(sampleRate: 48_000, bufferFrames: 48_000)
        let before = ClockPacer.now()
        for _ in 0..<4 {
            let overrun = roomy.waitForCapture(256)
            #expect(!overrun)
        }
        // Four periods captured: never sooner than 21.3 ms (absolute sleeps from the first read).
        let waited = Double(ClockPacer.now() - before) / 1e9
        #expect(waited >= 4 * 256 / 48_000, "four periods read in \(waited * 1000) ms")
        // Away for 30 ms, more than a 10.7 ms buffer: an overrun, and the stream starts again, its
        // first period waited for, and the next.
        var tight = ClockPacer(sampleRate: 48_000, bufferFrames: 512)
        _ = tight.waitForCapture(256)
        usleep(30_000)
        let again = ClockPacer.now()
        let overrun = tight.waitForCapture(256)
        #expect(overrun)
        _ = tight.waitForCapture(256)
        let restarted = Double(ClockPacer.now() - again) / 1e9
        #expect(restarted >= 2 * 256 / 48_000, "two periods after the overrun read in \(restarted * 1000) ms")
    }

    /// Whether the stream plays (it has an account), or could have run dry by now: a busy machine
    /// may keep this thread off the processor for longer than the buffer after `since`.
    func playing(_ pacer: ClockPacer, since: UInt64) -> Bool {
        pacer.delay(at: ClockPacer.now()) != nil || ClockPacer.now() - since > 10_000_000
    }
}
