import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

@Suite("MusicSequence.ending(atSeconds:): an excerpt's end")
struct MusicSequenceExcerptTests {
    /// 480 ticks per quarter at 120 BPM (the file's default division and tempo): 960 ticks a second.
    private func song() -> MusicSequence {
        MusicSequence(
            file: makeFile(tracks: [
                [
                    (0, .programChange(channel: 0, program: 5)), (0, .noteOn(channel: 0, note: 60, velocity: 90)),
                    (100, .controlChange(channel: 1, controller: 64, value: 127)),
                    (200, .noteOn(channel: 1, note: 40, velocity: 80)),
                    (300, .noteOn(channel: 0, note: 64, velocity: 70)),
                    (600, .noteOff(channel: 0, note: 64, velocity: 0)),
                    (960, .noteOn(channel: 0, note: 67, velocity: 60)),
                    (1_920, .noteOff(channel: 0, note: 60, velocity: 0)),
                    (1_920, .noteOff(channel: 0, note: 67, velocity: 0)),
                    (1_920, .noteOff(channel: 1, note: 40, velocity: 0)),
                ]
            ]))
    }

    @Test("the events before the end stay; the notes sounding end there, the held pedal is let go")
    func cutsAndEnds() throws {
        let sequence = song()
        let ticksPerSecond = sequence.tempoMap.tick(forSeconds: 1)
        let excerpt = sequence.ending(atSeconds: 960 / ticksPerSecond)
        #expect(excerpt.lengthInTicks == 960)
        #expect(abs(excerpt.durationSeconds - 960 / ticksPerSecond) < 1e-9)
        let events = excerpt.tracks.flatMap(\.events)
        #expect(
            events.map(\.message) == [
                .programChange(channel: 0, program: 5), .noteOn(channel: 0, note: 60, velocity: 90),
                .controlChange(channel: 1, controller: 64, value: 127), .noteOn(channel: 1, note: 40, velocity: 80),
                .noteOn(channel: 0, note: 64, velocity: 70), .noteOff(channel: 0, note: 64, velocity: 0),
                .noteOff(channel: 0, note: 60, velocity: 0), .noteOff(channel: 1, note: 40, velocity: 0),
                .controlChange(channel: 1, controller: 64, value: 0),
            ], "the note-on at the end itself is left out")
        #expect(events.suffix(3).allSatisfy { $0.tick == 960 })
        for track in excerpt.tracks {
            #expect(track.eventSeconds == track.events.map { sequence.tempoMap.seconds(forTick: $0.tick) })
            #expect(track.fileOrder.map(Int.init).sorted() == Array(track.events.indices))
        }
    }

    @Test("an end at or past the song's own is the song; one at 0 keeps no note")
    func edges() {
        let sequence = song()
        #expect(sequence.ending(atSeconds: sequence.durationSeconds) === sequence)
        #expect(sequence.ending(atSeconds: .infinity) === sequence)
        let nothing = sequence.ending(atSeconds: 0)
        #expect(nothing.lengthInTicks == 0)
        #expect(!nothing.tracks.contains { $0.events.contains(where: \.message.isNoteStart) })
    }
}
