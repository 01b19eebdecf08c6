// Writes Examples/demo-song.mid: a short General MIDI piece (piano, bass, strings, flute, drums)
// made with Pianola's MIDIFile API. Deterministic: the test suite regenerates it and compares.
//
//   swift run make-demo-song [OUTPUT.mid]
import MIDICore
import SMF

let ticks = 480
let bar = ticks * 4

/// Notes as (bar, beat offset in quarters, length in quarters, key, velocity).
func track(
    name: String, channel: UInt8, program: UInt8?, volume: UInt8, pan: UInt8,
    notes: [(Int, Double, Double, UInt8, UInt8)]
) -> MIDIFile.Track {
    var events: [(Int, Int, MIDIFile.Payload)] = [(0, 0, .meta(.text(.trackName, Array(name.utf8))))]
    if let program { events.append((0, 1, .channel(.programChange(channel: channel, program: program)))) }
    events.append((0, 1, .channel(.controlChange(channel: channel, controller: 7, value: volume))))
    events.append((0, 1, .channel(.controlChange(channel: channel, controller: 10, value: pan))))
    events.append((0, 1, .channel(.controlChange(channel: channel, controller: 91, value: 40))))
    for (barIndex, beat, length, key, velocity) in notes {
        let start = barIndex * bar + Int(beat * Double(ticks))
        let end = start + Int(length * Double(ticks)) - 10
        events.append((start, 2, .channel(.noteOn(channel: channel, note: key, velocity: velocity))))
        events.append((end, 0, .channel(.noteOff(channel: channel, note: key, velocity: 64))))
    }
    events.sort { ($0.0, $0.1) < ($1.0, $1.1) }
    let end = 8 * bar
    return MIDIFile.Track(
        events: events.map { MIDIFile.Event(tick: $0.0, $0.2) } + [MIDIFile.Event(tick: end, .meta(.endOfTrack))])
}

// I–vi–IV–V in C, twice.
let chords: [[UInt8]] = [[60, 64, 67], [57, 60, 64], [53, 57, 60], [55, 59, 62]]
let roots: [UInt8] = [36, 33, 29, 31]
var piano: [(Int, Double, Double, UInt8, UInt8)] = []
var bass: [(Int, Double, Double, UInt8, UInt8)] = []
var strings: [(Int, Double, Double, UInt8, UInt8)] = []
var flute: [(Int, Double, Double, UInt8, UInt8)] = []
var drums: [(Int, Double, Double, UInt8, UInt8)] = []
let melody: [UInt8] = [76, 74, 72, 74, 76, 76, 76, 74, 72, 69, 72, 74, 71, 72, 74, 79]
for barIndex in 0..<8 {
    let chord = chords[barIndex % 4]
    for beat in 0..<4 {
        for key in chord { piano.append((barIndex, Double(beat), 0.9, key, beat == 0 ? 90 : 70)) }
        bass.append((barIndex, Double(beat), 0.9, roots[barIndex % 4] + (beat % 2 == 1 ? 7 : 0), 100))
        drums.append((barIndex, Double(beat), 0.5, beat % 2 == 0 ? 36 : 38, 110))
        drums.append((barIndex, Double(beat) + 0.5, 0.25, 42, 70))
        drums.append((barIndex, Double(beat), 0.25, 42, 80))
    }
    for key in chord { strings.append((barIndex, 0, 4, key - 12, 60)) }
    if barIndex >= 4 {
        for half in 0..<2 { flute.append((barIndex, Double(half * 2), 2, melody[(barIndex - 4) * 2 + half], 90)) }
    }
}
drums.append((7, 3, 1, 49, 120))

var conductor = MIDIFile.Track(events: [
    MIDIFile.Event(tick: 0, .meta(.text(.trackName, Array("Pianola demo".utf8)))),
    MIDIFile.Event(tick: 0, .meta(.text(.copyright, Array("Pianola project; free to use".utf8)))),
    MIDIFile.Event(tick: 0, .meta(.tempo(microsecondsPerQuarterNote: 500_000))),
    MIDIFile.Event(
        tick: 0,
        .meta(.timeSignature(numerator: 4, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8))),
    MIDIFile.Event(tick: 0, .meta(.keySignature(sharps: 0, minor: false))),
    MIDIFile.Event(tick: 4 * bar, .meta(.tempo(microsecondsPerQuarterNote: 480_000))),
    MIDIFile.Event(tick: 8 * bar, .meta(.endOfTrack)),
])
conductor.events.sort { $0.tick < $1.tick }
let file = MIDIFile(
    format: .multiTrack, division: .ticksPerQuarterNote(ticks),
    tracks: [
        conductor,
        track(name: "Piano", channel: 0, program: 0, volume: 90, pan: 54, notes: piano),
        track(name: "Bass", channel: 1, program: 33, volume: 105, pan: 64, notes: bass),
        track(name: "Strings", channel: 2, program: 48, volume: 70, pan: 80, notes: strings),
        track(name: "Flute", channel: 3, program: 73, volume: 95, pan: 70, notes: flute),
        track(name: "Drums", channel: 9, program: nil, volume: 100, pan: 64, notes: drums),
    ])
let output = CommandLine.arguments.dropFirst().first ?? "Examples/demo-song.mid"
do {
    try file.write(to: output)
    print("wrote \(output): \(file.noteCount) notes, \(Int(file.durationSeconds)) s")
} catch {
    print("make-demo-song: \(error)")
}
