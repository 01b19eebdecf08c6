import AudioGraph
import MIDICore
import PianolaSupport
import SMF
import TestSupport
import Testing

@testable import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// A transport as a JACK server runs one, cycle by cycle, for a player that follows it: it
/// waits in "starting" until the player is ready (slow sync), and a locate while rolling goes
/// through "starting" too, unless `waits` is off (a follower the transport does not wait for).
final class SimulatedTransport {
    enum State { case stopped, starting, rolling }
    let harness: Harness
    let period: Int
    var state = State.stopped
    var frame = 0
    var waits = true
    private var pendingLocate: Int?
    private var wasRolling = false
    /// The engine's sample time at which each rolling run began, and the transport frame then.
    private(set) var rollStarts: [(sample: Int64, frame: Int)] = []

    init(_ harness: Harness, period: Int = 256) {
        self.harness = harness
        self.period = period
    }

    func start() { if state == .stopped { state = .starting } }
    func stop() { state = .stopped }
    func locate(_ frame: Int) { pendingLocate = frame }

    /// One server cycle: the sync question when due, the cycle's report, the render.
    func cycle() throws {
        var asks = false
        var located = false
        if let target = pendingLocate {
            frame = target
            pendingLocate = nil
            asks = true
            located = true
            if state == .rolling && waits { state = .starting }
        }
        if state == .starting { asks = true }
        if asks && waits {
            let ready = harness.player.isReadyToRoll(from: Double(frame) / harness.rate)
            if ready && state == .starting { state = .rolling }
        } else if state == .starting {
            state = .rolling
        }
        let sample = harness.engine.currentSampleTime
        // A run begins when the transport starts rolling, or is located while rolling. (Frames
        // alone cannot tell: after a wait in "starting" the new place can fall where the old run
        // would have been, as it once did on a loaded machine.)
        if state == .rolling && (!wasRolling || located) { rollStarts.append((sample, frame)) }
        wasRolling = state == .rolling
        harness.player.transportCycle(
            isRolling: state == .rolling, seconds: Double(frame) / harness.rate, sampleTime: sample)
        try harness.render(frames: period)
        if state == .rolling { frame += period }
    }

    /// Cycles until rolling (the player's cue is built on its own thread: wait for it a little).
    func cycleUntilRolling() throws {
        for _ in 0..<2_000 where state != .rolling {
            try cycle()
            usleep(1_000)
        }
        #expect(state == .rolling, "the transport never rolled")
    }

    func cycles(_ count: Int) throws { for _ in 0..<count { try cycle() } }
}

@Suite("Music player following an external transport (JACK's, simulated cycle by cycle)")
struct MusicPlayerTransportTests {
    /// 120 BPM, 4/4 (a bar is 2 s): program 5 and a controller at the start, then a note every
    /// beat (key 40 + beat % 40), each half a beat long, for 16 bars.
    static func song() -> MIDIFile {
        var notes: [(Int, MIDIMessage)] = [
            (0, .programChange(channel: 0, program: 5)), (0, .controlChange(channel: 0, controller: 7, value: 90)),
        ]
        for beat in 0..<64 {
            notes.append((beat * 480, on(UInt8(40 + beat % 40))))
            notes.append((beat * 480 + 240, off(UInt8(40 + beat % 40))))
        }
        return makeFile(tracks: [notes])
    }

    static func following() throws -> (Harness, SimulatedTransport) {
        let harness = try Harness(song(), quantum: 256)
        harness.player.followsTransport = true
        try harness.render(frames: 256)  // the engine's first quantum, before the transport reports
        return (harness, SimulatedTransport(harness))
    }

    /// The frame at which the song's `beat` plays, when the transport rolled from `startFrame`
    /// at engine sample `startSample`.
    static func frame(ofBeat beat: Double, rollingFrom start: (sample: Int64, frame: Int)) -> Int64 {
        start.sample + Int64((beat * 0.5 * 48_000).rounded()) - Int64(start.frame)
    }

    @Test("with no thread for its cues, the player does not follow (the property stays false); later it can")
    func followingWithoutAThread() throws {
        let harness = try Harness(Self.song(), quantum: 256)
        SystemThread.$refusesThreads.withValue(true) { harness.player.followsTransport = true }
        #expect(!harness.player.followsTransport)
        #expect(harness.player.isReadyToRoll(from: 3), "not following: nothing to wait for")
        harness.player.followsTransport = true
        #expect(harness.player.followsTransport)
        harness.player.followsTransport = false
        #expect(!harness.player.followsTransport)
    }

    @Test("nothing plays until the transport rolls; then every note at the transport's frame, exactly")
    func startsWithTheTransport() throws {
        let (harness, transport) = try Self.following()
        try transport.cycles(20)
        #expect(harness.recorder.received.isEmpty, "played before the transport rolled")
        #expect(!harness.player.isPlaying)
        transport.start()
        try transport.cycleUntilRolling()
        try transport.cycles(200)  // 1.07 s
        let start = try #require(transport.rollStarts.first)
        let notes = harness.recorder.notesOn
        #expect(notes.count == 3)
        for (index, note) in notes.enumerated() {
            #expect(note.0 == Self.frame(ofBeat: Double(index), rollingFrom: start) && note.1 == 40 + UInt8(index))
        }
        #expect(harness.player.isPlaying)
    }

    @Test(
        "located to bar 9 while stopped, then started: the chase at the first rolling frame, the notes from beat 32 on time"
    )
    func locateWhileStopped() throws {
        let (harness, transport) = try Self.following()
        transport.locate(16 * 48_000)  // bar 9 at 120 BPM in 4/4
        try transport.cycles(2)
        transport.start()
        try transport.cycleUntilRolling()
        try transport.cycles(100)
        let start = try #require(transport.rollStarts.first)
        #expect(start.frame == 16 * 48_000)
        let received = harness.recorder.received
        let program = received.first { if case .programChange = $0.message { return true } else { return false } }
        #expect(program?.frame == start.sample && program?.message == .programChange(channel: 0, program: 5))
        #expect(received.contains { $0.message == .controlChange(channel: 0, controller: 7, value: 90) })
        let notes = harness.recorder.notesOn
        #expect(notes.first?.1 == 40 + 32 % 40 && notes.first?.0 == start.sample, "\(notes.prefix(2))")
        #expect(notes.count == 2 && notes.last?.0 == Self.frame(ofBeat: 33, rollingFrom: start))
        #expect(abs(harness.player.currentPositionInSeconds - (16 + 102 * 256 / 48_000.0)) < 0.02)
    }

    @Test("stopped: the sounding note released in that cycle, silence after; started again where it stood, at once")
    func stopAndResume() throws {
        let (harness, transport) = try Self.following()
        transport.start()
        try transport.cycleUntilRolling()
        try transport.cycles(10)  // 2560 frames into the first note (it lasts 12 000)
        transport.stop()
        let stopSample = harness.engine.currentSampleTime
        try transport.cycles(30)
        let offs = harness.recorder.received.filter { $0.message.isNoteEnd }
        #expect(offs.count == 1 && offs.first?.frame == stopSample, "\(offs)")
        let countWhileStopped = harness.recorder.received.count
        try transport.cycles(30)
        #expect(harness.recorder.received.count == countWhileStopped, "events while stopped")
        #expect(!harness.player.isPlaying)
        transport.start()
        try transport.cycle()  // ready at once: no cue needed where it stopped
        try transport.cycle()
        #expect(transport.state == .rolling)
        try transport.cycles(200)
        let second = try #require(transport.rollStarts.last)
        #expect(transport.rollStarts.count == 2 && second.frame == 11 * 256)
        let next = harness.recorder.notesOn.first { $0.0 >= second.sample }
        #expect(next?.1 == 41 && next?.0 == Self.frame(ofBeat: 1, rollingFrom: second))
    }

    @Test("located back while rolling: through 'starting', then from the new place with the chase")
    func locateWhileRolling() throws {
        let (harness, transport) = try Self.following()
        transport.start()
        try transport.cycleUntilRolling()
        try transport.cycles(300)
        transport.locate(4 * 48_000)  // bar 3
        // The locate takes effect on the next cycle (until then the transport still rolls, and
        // waiting for it to roll would not wait): then wait for the player's new cue, built on
        // its own thread (slow on a loaded machine: CI once ran 100 cycles without it).
        try transport.cycle()
        try transport.cycleUntilRolling()
        try transport.cycles(100)
        let restart = try #require(transport.rollStarts.last)
        #expect(restart.frame == 4 * 48_000)
        let after = harness.recorder.received.filter { $0.frame >= restart.sample }
        #expect(after.first?.message == .programChange(channel: 0, program: 5), "no chase: \(after.prefix(3))")
        let notes = after.compactMap { event -> Int64? in
            if case .noteOn(_, let key, _) = event.message, key == 48 { return event.frame }
            return nil
        }
        #expect(notes == [restart.sample])
        // Every note the first run started is ended before the second run's first note.
        let ons = harness.recorder.received.filter { $0.frame < restart.sample && $0.message.isNoteStart }.count
        let offs = harness.recorder.received.filter { $0.frame <= restart.sample && $0.message.isNoteEnd }.count
        #expect(ons == offs)
    }

    @Test("a transport that rolls on without waiting: the song joins a quarter second ahead, on the exact frame")
    func joinsARollingTransport() throws {
        let (harness, transport) = try Self.following()
        transport.waits = false
        transport.locate(3 * 24_000 + 1_000)  // just after beat 3
        transport.start()
        // Cycles in real time (256 frames at 48 kHz, 5.3 ms) until past the cue: the player's cue
        // thread has the quarter second it has on a real server, not the 0.1 s of a faster
        // pace, which a loaded machine sometimes overran.
        for _ in 0..<50 {
            try transport.cycle()
            usleep(5_333)
        }
        try transport.cycles(1_000)  // 5.3 s
        let start = try #require(transport.rollStarts.first)
        let notes = harness.recorder.notesOn
        let program = harness.recorder.received.first { $0.message == .programChange(channel: 0, program: 5) }
        let join = try #require(program?.frame)
        // The cue is 0.25 s after the place the player first saw rolling.
        #expect(join == start.sample + 12_000)
        #expect(notes.first?.1 == 44 && notes.first?.0 == Self.frame(ofBeat: 4, rollingFrom: start))
        #expect(notes.count > 10)
        for (index, note) in notes.enumerated() {
            #expect(note.0 == Self.frame(ofBeat: Double(4 + index), rollingFrom: start))
        }
    }

    @Test("the bar grid published for a timebase: bars, beats and tempo through meter and tempo changes")
    func musicalPosition() throws {
        // 120 BPM in 4/4 for 2 bars, then 3/4 at 90 BPM.
        var file = makeFile(tempos: [(0, 500_000), (3_840, 666_667)], tracks: [[(0, on(60)), (9_600, off(60))]])
        file.tracks[0].events.insert(
            MIDIFile.Event(
                tick: 3_840,
                .meta(.timeSignature(numerator: 3, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8))
            ),
            at: 1)
        let player = MusicPlayer(sequence: MusicSequence(file: file), destination: RecordingNode())
        let start = try #require(player.musicalPosition(atSeconds: 0))
        #expect(start.bar == 1 && start.beat == 1 && start.tick == 0 && start.beatsPerBar == 4 && start.beatType == 4)
        #expect(start.beatsPerMinute == 120 && start.ticksPerBeat == 480)
        let beat = try #require(player.musicalPosition(atSeconds: 2.75))  // bar 2, beat 2 and a half
        #expect(beat.bar == 2 && beat.beat == 2 && beat.tick == 240 && beat.barStartTick == 1_920)
        let waltz = try #require(player.musicalPosition(atSeconds: 4 + 4 * 0.666667))  // bar 4 starts 2 s after bar 3
        #expect(waltz.bar == 4 && waltz.beat == 2 && waltz.beatsPerBar == 3, "\(waltz)")
        #expect(abs(waltz.beatsPerMinute - 90) < 0.001 && waltz.barStartTick == 3_840 + 1_440)
    }
}
