import Foundation
import SMF
import TestSupport
import Testing

@Suite("render and damaged delta times", .serialized)
struct DefectGapCommandTests {
    @Test("a silence only a damaged delta time made is cut, with a warning, instead of refusing or rendering hours")
    func cutsTheGap() throws {
        try withTemporaryFolder("defect-gap") { folder in
            let huge = 1 << 24  // 4 h 51 min at 120 BPM, 480 ticks a beat
            let events: [MIDIFile.Event] = [
                MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: 60, velocity: 90))),
                MIDIFile.Event(tick: 480, .channel(.noteOff(channel: 0, note: 60, velocity: 0))),
                MIDIFile.Event(tick: 480 + huge, .channel(.noteOn(channel: 0, note: 64, velocity: 90))),
                MIDIFile.Event(tick: 960 + huge, .channel(.noteOff(channel: 0, note: 64, velocity: 0))),
                MIDIFile.Event(tick: 960 + huge, .meta(.endOfTrack)),
            ]
            let song = folder + "/damaged.mid"
            let file = MIDIFile(
                format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [MIDIFile.Track(events: events)])
            try Data(file.serialized()).write(to: URL(fileURLWithPath: song))
            let result = try runPianola([
                "render", "-s", bundledFontPath, "--tail", "0", song, "-o", folder + "/out.wav",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("cut 4:51:16 of silence that a damaged delta time made (track 0, tick 480"))
            // Two half-second notes, back to back.
            let stats = try wavStats(folder + "/out.wav")
            #expect(stats.frames <= 44_100 * 2 && stats.frames >= 44_100 && stats.peak > 0.01)
        }
    }
}
