import MIDICore
import Testing

@testable import SMF

@Suite("Silences only a damaged delta time made")
struct DefectGapTests {
    private let huge = 1 << 24

    private func file(_ tracks: [[(Int, MIDIFile.Payload)]]) -> MIDIFile {
        MIDIFile(
            format: .multiTrack, division: .ticksPerQuarterNote(480),
            tracks: tracks.map { events in
                MIDIFile.Track(events: events.map { MIDIFile.Event(tick: $0.0, $0.1) })
            })
    }

    private func note(_ on: Bool, _ key: UInt8 = 60) -> MIDIFile.Payload {
        .channel(on ? .noteOn(channel: 0, note: key, velocity: 90) : .noteOff(channel: 0, note: key, velocity: 0))
    }

    @Test("a gap nothing plays in is cut, in every track, and reported; the music around it keeps its timing")
    func cutsAnEmptyGap() {
        let song = file([
            [
                (0, note(true)), (480, note(false)), (480 + huge, note(true, 62)), (960 + huge, note(false, 62)),
                (960 + huge, .meta(.endOfTrack)),
            ],
            [
                (0, note(true, 64)), (240, note(false, 64)), (600 + huge, note(true, 65)),
                (700 + huge, note(false, 65)),
                (700 + huge, .meta(.endOfTrack)),
            ],
        ])
        let (cut, gaps) = song.cuttingDefectGaps()
        #expect(gaps == [MIDIFile.DefectGap(track: 0, tick: 480, ticks: huge)])
        #expect(cut.tracks[0].events.map(\.tick) == [0, 480, 480, 960, 960])
        #expect(cut.tracks[1].events.map(\.tick) == [0, 240, 600, 700, 700])
    }

    @Test("a trailing gap (a far End of Track) is cut; gaps with music in them, or a note held across, stay")
    func keepsMusic() {
        let trailing = file([[(0, note(true)), (480, note(false)), (480 + huge, .meta(.endOfTrack))]])
        #expect(trailing.cuttingDefectGaps().file.tracks[0].length == 480)
        let busy = file([
            [(0, note(true)), (480, note(false)), (480 + huge, note(true)), (500 + huge, note(false))],
            [(0, note(true, 70)), (huge / 2, note(false, 70))],
        ])
        #expect(busy.cuttingDefectGaps().cuts.isEmpty)
        let held = file([[(0, note(true)), (480 + huge, note(false)), (500 + huge, .meta(.endOfTrack))]])
        #expect(held.cuttingDefectGaps().cuts.isEmpty)
        let clean = file([[(0, note(true)), (480, note(false))]])
        #expect(clean.cuttingDefectGaps().file == clean)
    }
}
