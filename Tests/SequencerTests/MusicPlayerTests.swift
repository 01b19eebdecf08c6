import AudioGraph
import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

struct Harness {
    let engine = AudioEngine()
    let recorder = RecordingNode()
    let player: MusicPlayer
    let rate = 48_000.0
    init(_ file: MIDIFile, quantum: Int = 256) throws {
        player = MusicPlayer(sequence: MusicSequence(file: file), destination: recorder)
        try engine.attach(recorder)
        try engine.connect(recorder, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: quantum)
    }
    func render(frames: Int) throws {
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
        try engine.renderOffline(frameCount: frames, into: buffer)
    }
}

@Suite("Music player: sample-accurate scheduling and transport")
struct MusicPlayerTests {
    @Test("events land on the exact frame the tempo map gives, across tempo changes and quantum sizes")
    func sampleAccurate() throws {
        // 120 BPM, then 90 BPM from beat 2, then 200 BPM from beat 5; a note every 7 ticks.
        let tempos = [(0, 500_000), (960, 666_667), (2400, 300_000)]
        var notes: [(Int, MIDIMessage)] = []
        for index in 0..<500 {
            notes.append((index * 7, on(UInt8(40 + index % 40))));
            notes.append((index * 7 + 5, off(UInt8(40 + index % 40))))
        }
        let file = makeFile(tempos: tempos, tracks: [notes])
        let map = file.tempoMap
        for quantum in [64, 256, 1000] {
            let harness = try Harness(file, quantum: quantum)
            harness.player.play()
            try harness.render(frames: Int(map.seconds(forTick: 3600) * 48_000) + 1000)
            let expected = (0..<500).map { Int64((map.seconds(forTick: $0 * 7) * 48_000).rounded()) }
            #expect(harness.recorder.notesOn.map(\.0) == expected, "quantum \(quantum)")
        }
    }

    @Test("lyrics come from Lyric events, and from Text events in .kar files")
    func lyrics() {
        let text = { (tick: Int, string: String) in MIDIFile.Event(tick: tick, .meta(.text(.text, Array(string.utf8))))
        }
        let karaoke = MIDIFile(
            format: .multiTrack, division: .ticksPerQuarterNote(480),
            tracks: [
                MIDIFile.Track(events: [
                    text(0, "@KMIDI KARAOKE FILE"), text(0, "@TTitle"), MIDIFile.Event(tick: 960, .meta(.endOfTrack)),
                ]),
                MIDIFile.Track(events: [
                    text(0, "\\Ma"), text(240, "ry "), text(480, "/had"), MIDIFile.Event(tick: 960, .meta(.endOfTrack)),
                ]),
            ])
        #expect(MusicSequence(file: karaoke).lyrics.map(\.text) == [" Ma", "ry ", " had"])
        let plain = MIDIFile(
            format: .multiTrack, division: .ticksPerQuarterNote(480),
            tracks: [
                MIDIFile.Track(events: [
                    text(0, "just text"), MIDIFile.Event(tick: 10, .meta(.text(.lyric, Array("la".utf8)))),
                    MIDIFile.Event(tick: 960, .meta(.endOfTrack)),
                ])
            ])
        #expect(MusicSequence(file: plain).lyrics.map(\.text) == ["la"])
    }

    @Test("note-offs come before note-ons at the same time, across tracks")
    func noteOffsFirst() throws {
        let file = makeFile(tracks: [[(0, on(60)), (480, off(60))], [(480, on(60)), (960, off(60))]])
        let harness = try Harness(file)
        harness.player.play()
        try harness.render(frames: 48_000)
        let atBeat = harness.recorder.received.filter { $0.frame == 24_000 }.map(\.message)
        #expect(atBeat == [off(60), on(60)])
    }

    @Test("seek chases program, controllers, pitch bend and pressure, and releases sounding notes")
    func seekChases() throws {
        let file = makeFile(tracks: [
            [
                (0, .controlChange(channel: 1, controller: 0, value: 1)), (0, .programChange(channel: 1, program: 33)),
                (0, .controlChange(channel: 1, controller: 7, value: 90)),
                (10, .controlChange(channel: 1, controller: 7, value: 70)),
                (20, .pitchBend(channel: 1, value: 9000)), (30, .channelPressure(channel: 1, pressure: 50)),
                (0, .controlChange(channel: 1, controller: 101, value: 0)),
                (0, .controlChange(channel: 1, controller: 100, value: 0)),
                (0, .controlChange(channel: 1, controller: 6, value: 12)),
                (40, on(60, channel: 1)), (2000, off(60, channel: 1)), (2400, on(62, channel: 1)),
                (2500, off(62, channel: 1)),
            ]
        ])
        let harness = try Harness(file)
        harness.player.play()
        try harness.render(frames: 4_800)  // 0.1 s: note 60 is sounding
        harness.recorder.received.removeAll()
        harness.player.seek(toSeconds: 2)  // tick 1920
        try harness.render(frames: 512)
        let messages = harness.recorder.received.map(\.message)
        #expect(messages.first == off(60, channel: 1), "the sounding note is released first")
        for expected: MIDIMessage in [
            .controlChange(channel: 1, controller: 0, value: 1), .programChange(channel: 1, program: 33),
            .controlChange(channel: 1, controller: 7, value: 70), .pitchBend(channel: 1, value: 9000),
            .channelPressure(channel: 1, pressure: 50), .controlChange(channel: 1, controller: 6, value: 12),
        ] {
            #expect(messages.contains(expected), "chased \(expected)")
        }
        #expect(
            !messages.contains(.controlChange(channel: 1, controller: 7, value: 90)), "only the last value is chased")
        try harness.render(frames: 48_000)
        #expect(harness.recorder.notesOn.map(\.1) == [62])
        #expect(abs(harness.player.currentPositionInSeconds - 2.5) < 0.02 || harness.player.isFinished)
    }

    @Test("stop and pause leave no note hanging; play resumes where it paused")
    func noStuckNotes() throws {
        let file = makeFile(tracks: [
            [(0, on(60)), (0, .controlChange(channel: 0, controller: 64, value: 127)), (4800, off(60))]
        ])
        let harness = try Harness(file)
        harness.player.play()
        try harness.render(frames: 10_000)
        harness.player.pause()
        try harness.render(frames: 256)
        let tail = harness.recorder.received.suffix(3).map(\.message)
        #expect(
            tail == [
                off(60), .controlChange(channel: 0, controller: 64, value: 0),
                .controlChange(channel: 0, controller: 66, value: 0),
            ])
        let pausedAt = harness.player.currentPositionInSeconds
        try harness.render(frames: 4_800)
        #expect(harness.player.currentPositionInSeconds == pausedAt)
        harness.recorder.received.removeAll()
        harness.player.play()
        try harness.render(frames: 256)
        #expect(
            harness.recorder.received.map(\.message).contains(.controlChange(channel: 0, controller: 64, value: 127)),
            "resume chases the pedal")
    }

    @Test("a loop range repeats the given number of times, sample-accurately, then playback ends")
    func looping() throws {
        let file = makeFile(tracks: [
            [(0, on(60)), (240, off(60)), (480, on(62)), (720, off(62)), (960, on(64)), (1200, off(64))]
        ])
        let harness = try Harness(file, quantum: 300)
        harness.player.setLoop(0.5..<1.0, count: 2)
        harness.player.play()
        try harness.render(frames: 48_000 * 3)
        #expect(harness.recorder.notesOn.map(\.1) == [60, 62, 62, 62, 64])
        #expect(harness.recorder.notesOn.map(\.0) == [0, 24_000, 48_000, 72_000, 96_000])
        #expect(harness.player.completedLoopCount == 2)
        #expect(harness.player.isFinished)
    }

    @Test("rate, transpose (not on drums), mute and solo")
    func rateTransposeMuteSolo() throws {
        let file = makeFile(tracks: [
            [(0, on(60)), (480, off(60)), (960, on(62)), (1440, off(62))],
            [(0, on(36, channel: 9)), (480, off(36, channel: 9))],
        ])
        let harness = try Harness(file)
        harness.player.rate = 2
        harness.player.transpose = 3
        try harness.player.setMuted(true, track: 2)
        harness.player.play()
        try harness.render(frames: 48_000)
        #expect(harness.recorder.notesOn.map(\.1) == [63, 65])
        #expect(harness.recorder.notesOn.map(\.0) == [0, 24_000])
        let again = try Harness(file)
        again.player.transpose = -2
        try again.player.setSoloed(true, track: 2)
        again.player.play()
        try again.render(frames: 48_000)
        #expect(again.recorder.notesOn.map(\.1) == [36], "drums are not transposed; solo silences the rest")
    }

    @Test("mute and solo of a track the sequence does not have throw noSuchTrack and change nothing")
    func muteSoloOutOfRange() throws {
        let file = makeFile(tracks: [[(0, on(60)), (480, off(60))], [(0, on(64)), (480, off(64))]])
        let harness = try Harness(file)  // the conductor track and two more
        #expect(throws: MusicPlayerError.noSuchTrack(3, trackCount: 3)) { try harness.player.setMuted(true, track: 3) }
        #expect(throws: MusicPlayerError.noSuchTrack(-1, trackCount: 3)) {
            try harness.player.setSoloed(true, track: -1)
        }
        #expect(throws: MusicPlayerError.noSuchTrack(Int.max, trackCount: 3)) {
            try harness.player.setSoloed(true, track: .max)
        }
        harness.player.play()
        try harness.render(frames: 48_000)
        #expect(harness.recorder.notesOn.map(\.1) == [60, 64], "every track still plays")
    }
}

/// A destination that logs messages and stream interruptions in the order they come.
private final class InterruptionLog: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    enum Entry: Equatable {
        case message(MIDIMessage)
        case interrupted(MIDIStreamInterruption)
    }
    var entries: [Entry] = []
    init() { super.init(name: "interruption log") }
    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) { entries.append(.message(message)) }
    func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int) {
        entries.append(.interrupted(interruption))
    }
}

@Suite("Music player: destinations hear of pauses, seeks and the end")
struct MusicPlayerInterruptionTests {
    @Test(
        "a seek: Note Offs, then .relocated, then the chase; a pause and the end: .stopped; through a router and a fan-out"
    )
    func interruptions() throws {
        let file = makeFile(tracks: [
            [
                (0, .programChange(channel: 0, program: 7)), (0, on(60)), (4_000, off(60)), (4_100, on(62)),
                (4_800, off(62)),
            ]
        ])
        let engine = AudioEngine()
        let log = InterruptionLog()
        let other = InterruptionLog()
        // Channel 1 to the log through a fan-out (beside a second log), the rest to the second log.
        let fan = MIDIFanOut(destinations: [log, other])
        let router = try MIDIChannelRouter(
            destinations: [fan, other], channelRoutes: [0] + [Int](repeating: 1, count: 15))
        let player = MusicPlayer(sequence: MusicSequence(file: file), destination: router)
        let sound = RecordingNode()  // (the engine renders what is connected to its output)
        try engine.attach(sound)
        try engine.connect(sound, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_800)
        player.play()
        try engine.renderOffline(frameCount: 4_800, into: buffer)  // 0.1 s: note 60 sounds
        log.entries.removeAll()
        player.seek(toSeconds: 4.2)  // tick 4032: past note 60's end, before note 62
        try engine.renderOffline(frameCount: 256, into: buffer)
        let relocated = try #require(log.entries.firstIndex(of: .interrupted(.relocated)))
        let released = try #require(log.entries.firstIndex(of: .message(off(60))))
        let chased = try #require(log.entries.firstIndex(of: .message(.programChange(channel: 0, program: 7))))
        #expect(released < relocated && relocated < chased, "\(log.entries)")
        #expect(!log.entries.contains(.interrupted(.stopped)))
        #expect(other.entries.contains(.interrupted(.relocated)), "the router and the fan-out pass it to all")
        log.entries.removeAll()
        player.pause()
        try engine.renderOffline(frameCount: 256, into: buffer)
        #expect(log.entries.contains(.interrupted(.stopped)))
        #expect(!log.entries.contains(.interrupted(.relocated)), "a pause keeps the controllers")
        log.entries.removeAll()
        player.play()
        for _ in 0..<20 { try engine.renderOffline(frameCount: 4_800, into: buffer) }  // to the end
        #expect(player.isFinished)
        #expect(log.entries.last == .interrupted(.stopped), "the end releases what sounds: \(log.entries)")
        #expect(log.entries.contains(.message(on(62))))
    }

    @Test("a loop wrap goes back as a seek would: .relocated, then the loop start's programs and controllers")
    func loopWrapChases() throws {
        let cc7 = { (value: UInt8) in MIDIMessage.controlChange(channel: 0, controller: 7, value: value) }
        let file = makeFile(tracks: [
            [
                (0, .programChange(channel: 0, program: 5)), (0, cc7(100)), (240, on(60)),
                (600, .programChange(channel: 0, program: 9)), (600, cc7(40)), (700, off(60)), (1_200, on(64)),
                (1_300, off(64)),
            ]
        ])
        let engine = AudioEngine()
        let log = InterruptionLog()
        let player = MusicPlayer(sequence: MusicSequence(file: file), destination: log)
        let sound = RecordingNode()
        try engine.attach(sound)
        try engine.connect(sound, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_800)
        player.setLoop(0.5..<1.0, count: 1)  // 0.625 s sets program 9 and volume 40 inside the loop
        player.play()
        for _ in 0..<12 { try engine.renderOffline(frameCount: 4_800, into: buffer) }
        #expect(player.completedLoopCount == 1)
        // (play() from the start goes there as a seek too: the wrap is the .relocated after the first pass.)
        let firstPass = try #require(log.entries.firstIndex(of: .message(.programChange(channel: 0, program: 9))))
        let wrap = try #require(log.entries[firstPass...].firstIndex(of: .interrupted(.relocated)))
        let after = Array(log.entries[wrap...])
        // Back at 0.5 s the channel is as it was there: program 5, volume 100, before 0.625 s changes it again.
        let program5 = try #require(after.firstIndex(of: .message(.programChange(channel: 0, program: 5))))
        let volume100 = try #require(after.firstIndex(of: .message(cc7(100))))
        let program9 = try #require(after.firstIndex(of: .message(.programChange(channel: 0, program: 9))))
        #expect(program5 < program9 && volume100 < program9, "\(after)")
        #expect(log.entries[firstPass..<wrap].contains(.message(off(60))), "the loop's notes released first")
    }
}
