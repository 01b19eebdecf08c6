import Foundation
import Testing

@testable import AudioIO

@Suite("Clock pacer: an unpaced device kept to real time")
struct ClockPacerTests {
    @Test("the buffer fills at once; then a period waits until one has played; a late write is an underrun")
    func pacing() {
        // 256-frame periods, two in the buffer, at 48 kHz: a period lasts 5.33 ms.
        var pacer = ClockPacer(sampleRate: 48_000, bufferFrames: 512)
        let begun = ClockPacer.now()
        for _ in 0..<2 {
            let late = pacer.waitForRoom(256)
            #expect(!late)
            pacer.wrote(256)
        }
        #expect(pacer.delay(at: ClockPacer.now()) != nil, "the stream starts once its buffer is full")
        let started = ClockPacer.now()
        #expect(Double(started - begun) < 5e6, "filling the buffer waited")
        // The third period: room once the first has played (never sooner; clock_nanosleep is absolute).
        let late = pacer.waitForRoom(256)
        #expect(!late)
        let waited = Double(ClockPacer.now() - started) / 1e9
        #expect(waited >= 256 / 48_000, "waited \(waited * 1000) ms for a period of 5.33 ms")
        pacer.wrote(256)
        let held = pacer.delay(at: ClockPacer.now()) ?? -1
        #expect(held > 0 && held <= 512, "the device holds \(held) frames")
        // Late by more than the buffer: an underrun, and the stream fills again before it plays.
        usleep(30_000)
        let underrun = pacer.waitForRoom(256)
        #expect(underrun)
        #expect(pacer.delay(at: ClockPacer.now()) == nil)
        pacer.wrote(256)
        #expect(pacer.delay(at: ClockPacer.now()) == nil, "half a buffer does not start the stream")
    }
}
