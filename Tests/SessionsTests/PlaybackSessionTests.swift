import ALSAIO
import AudioGraph
import Foundation
import MIDICore
import SMF
import Sequencer
import TestSupport
import Testing

@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Playback session: songs one after another, the transport, the status", .serialized)
struct PlaybackSessionTests {
    /// A bar of 3/4 at 100 BPM with lyrics; ALSA's null device takes the sound (it is not paced,
    /// so a song plays in much less than its length).
    let sequence: MusicSequence = {
        var file = makeFile(
            tempos: [(0, 600_000)],
            tracks: [[(0, on(60)), (480, off(60)), (480, on(64)), (1_440, off(64))]])
        file.tracks[0].events.insert(
            MIDIFile.Event(
                tick: 0,
                .meta(.timeSignature(numerator: 3, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8))
            ),
            at: 0)
        file.tracks[1].events.insert(MIDIFile.Event(tick: 0, .meta(.text(.lyric, Array("Hel".utf8)))), at: 0)
        file.tracks[1].events.insert(MIDIFile.Event(tick: 0, .meta(.text(.lyric, Array("lo".utf8)))), at: 1)
        return MusicSequence(file: file)
    }()

    func session(loops: Bool = false) throws -> PlaybackSession {
        var configuration = PlaybackSession.Configuration(
            soundFonts: [bundledFontPath], device: ALSAOutput.Configuration(device: "null", periodFrames: 256))
        configuration.loops = loops
        configuration.speed = 2
        return try PlaybackSession(configuration)
    }

    @Test("MIDI out to the ALSA sequencer: without one, a typed error naming /dev/snd/seq (the VM tests the rest)")
    func sequencerOutputUnavailable() throws {
        var configuration = PlaybackSession.Configuration(
            soundFonts: [bundledFontPath], device: ALSAOutput.Configuration(device: "null", periodFrames: 256))
        configuration.sequencer = PlaybackSession.SequencerMIDI(destinations: ["Synth"], routes: [(10, "Drums")])
        guard !FileManager.default.fileExists(atPath: "/dev/snd/seq") else {
            print("skipped: this machine has an ALSA sequencer; Tests/Device covers MIDI out through it")
            return
        }
        do {
            _ = try PlaybackSession(configuration)
            Issue.record("a session opened without a sequencer")
        } catch {
            guard case .midi(.sequencerUnavailable) = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(error.description.contains("/dev/snd/seq"), "\(error)")
        }
        // No destination at all, the sampler silent: refused before anything opens.
        configuration.sequencer = nil
        configuration.soundsSampler = false
        #expect(throws: SessionError.self) { try PlaybackSession(configuration) }
    }

    @Test("a song plays to its end; the status has its place, tempo (times the speed) and lyric line")
    func playsToTheEnd() throws {
        let session = try session()
        let before = session.status()
        #expect(!before.isPlaying && before.durationSeconds == 0)
        try session.play(sequence, from: 0.5)
        #expect(session.output.isRunning)
        let deadline = Date().addingTimeInterval(20)
        while !session.isSongFinished && Date() < deadline { usleep(10_000) }
        #expect(session.isSongFinished)
        // At the end: the first beat after the one 3/4 bar, both syllables sung.
        let status = session.status()
        #expect(status.durationSeconds == sequence.durationSeconds && status.positionSeconds == status.durationSeconds)
        #expect(status.bar == 2 && status.beat == 1 && status.beatsPerMinute == 200, "\(status)")
        #expect(status.lyricLine == "Hello", "\(status.lyricLine)")
        session.finish()
        #expect(!session.output.isOpen)
    }

    @Test("the transport: pause, seek within the song, speed in steps within 0.25…4, loop on and off")
    func transport() throws {
        let session = try session(loops: true)
        try session.play(sequence)
        session.togglePause()
        #expect(session.player?.isPlaying == false)
        session.seek(by: -10)
        usleep(50_000)
        #expect(session.status().positionSeconds == 0)
        session.seek(by: 100)
        usleep(50_000)
        #expect(session.status().positionSeconds == sequence.durationSeconds)
        for _ in 0..<40 { session.faster() }
        #expect(session.speed == 4 && session.player?.rate == 4)
        for _ in 0..<80 { session.slower() }
        #expect(session.speed == 0.25)
        #expect(session.loops)
        session.toggleLoop()
        #expect(!session.loops)
        session.togglePause()
        #expect(session.player?.isPlaying == true)
        // A second song replaces the first, which stops.
        let first = try #require(session.player)
        try session.play(sequence)
        #expect(!first.isPlaying && session.player !== first && session.player?.isPlaying == true)
        session.finish()
    }

    @Test("a session released without finishing closes its device")
    func releasesDevice() throws {
        weak var output: ALSAOutput?
        do {
            let session = try session()
            try session.play(sequence)
            output = session.output as? ALSAOutput
            #expect(output != nil)
        }
        #expect(output == nil)
    }
}
