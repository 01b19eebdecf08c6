import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

@Suite("MusicSequence.keepingChannels")
struct MusicSequenceFilterTests {
    @Test("keeps the named channels' messages and every SysEx; the length and tempo map stay")
    func keepsChannels() throws {
        let file = makeFile(
            tempos: [(0, 400_000), (960, 600_000)],
            tracks: [
                [
                    (0, .programChange(channel: 0, program: 5)), (0, .noteOn(channel: 0, note: 60, velocity: 90)),
                    (0, .noteOn(channel: 3, note: 62, velocity: 90)),
                    (240, .systemExclusive([0x7E, 0x7F, 0x09, 0x01])),
                    (480, .noteOff(channel: 0, note: 60, velocity: 0)),
                    (480, .noteOff(channel: 3, note: 62, velocity: 0)),
                ],
                [
                    (100, .controlChange(channel: 9, controller: 7, value: 90)),
                    (1_920, .noteOn(channel: 9, note: 36, velocity: 1)),
                ],
            ])
        let sequence = MusicSequence(file: file)
        let kept = sequence.keepingChannels([0, 9])
        #expect(kept.lengthInTicks == sequence.lengthInTicks)
        #expect(kept.durationSeconds == sequence.durationSeconds)
        let first = kept.tracks[1].events.map(\.message)
        #expect(
            first == [
                .programChange(channel: 0, program: 5), .noteOn(channel: 0, note: 60, velocity: 90),
                .systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .noteOff(channel: 0, note: 60, velocity: 0),
            ])
        #expect(kept.tracks[2].events.count == 2)
        // Seconds and file order follow the kept events.
        for track in kept.tracks {
            #expect(track.eventSeconds == track.events.map { sequence.tempoMap.seconds(forTick: $0.tick) })
            #expect(track.fileOrder.map(Int.init).sorted() == Array(track.events.indices))
        }
        #expect(sequence.keepingChannels([]).tracks.allSatisfy { $0.events.allSatisfy { $0.message.channel == nil } })
    }
}
