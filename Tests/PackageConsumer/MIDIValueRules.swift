// Issue 43, point 11: a MIDI number out of range is refused where it is found, never masked into
// another. Builds the note-on (channel 20, note 250, velocity 200) and checks that
// validated(), bytes, writing a MIDI file and the sampler's note API each throw a MIDIValueError
// naming the field. Exits 1 with a message when one of them takes the message anyway.
import Foundation
import Pianola

func fail(_ message: String) -> Never {
    print("point 11 FAILED: \(message)")
    exit(1)
}

let message = MIDIMessage.noteOn(channel: 20, note: 250, velocity: 200)
let channel = MIDIValueError(field: "channel", value: 20, range: 0...15)

do throws(MIDIValueError) {
    _ = try message.validated()
    fail("validated() took channel 20")
} catch {
    guard error == channel else { fail("validated() threw \(error), not \(channel)") }
}
do throws(MIDIValueError) {
    let bytes = try message.bytes
    fail("the message encoded as \(bytes.map { String($0, radix: 16) })")
} catch {
    guard error == channel else { fail("bytes threw \(error), not \(channel)") }
}

// A MIDI file holding it is not written at all.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-consumer-midi-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
let file = MIDIFile(
    format: .singleTrack, division: .ticksPerQuarterNote(480),
    tracks: [MIDIFile.Track(events: [MIDIFile.Event(tick: 0, .channel(message))])])
do throws(MIDIFileError) {
    try file.write(to: folder + "/song.mid")
    fail("the MIDI file was written (it would read back as another note)")
} catch {
    let written = FileManager.default.fileExists(atPath: folder + "/song.mid")
    try? FileManager.default.removeItem(atPath: folder)
    guard error == .valueOutOfRange(track: 0, event: 0, channel) else { fail("writing threw \(error)") }
    guard !written else { fail("a file was left") }
}

// The sampler's note API, AVAudioUnitSampler-style.
let sampler = try SamplerNode()
let calls: [(String, () throws(MIDIValueError) -> Void, MIDIValueError)] = [
    (
        "startNote(200, withVelocity: 100, onChannel: 0)",
        { () throws(MIDIValueError) in try sampler.startNote(200, withVelocity: 100, onChannel: 0) },
        MIDIValueError(field: "note", value: 200, range: 0...127)
    ),
    (
        "startNote(60, withVelocity: 100, onChannel: 16)",
        { () throws(MIDIValueError) in try sampler.startNote(60, withVelocity: 100, onChannel: 16) },
        MIDIValueError(field: "channel", value: 16, range: 0...15)
    ),
    (
        "startNote(60, withVelocity: 128, onChannel: 0)",
        { () throws(MIDIValueError) in try sampler.startNote(60, withVelocity: 128, onChannel: 0) },
        MIDIValueError(field: "velocity", value: 128, range: 0...127)
    ),
    (
        "sendController(200, withValue: 200, onChannel: 99)",
        { () throws(MIDIValueError) in try sampler.sendController(200, withValue: 200, onChannel: 99) },
        MIDIValueError(field: "channel", value: 99, range: 0...15)
    ),
]
var refusals: [String] = []
for (call, body, expected) in calls {
    do throws(MIDIValueError) {
        try body()
        fail("\(call) returned without an error")
    } catch {
        guard error == expected else { fail("\(call) threw \(error), not \(expected)") }
        refusals.append("\(call): \(error)")
    }
}
try sampler.startNote(127, withVelocity: 127, onChannel: 15)  // the edges are accepted
for refusal in refusals { print(refusal) }
print(
    "point 11: out-of-range MIDI numbers refused: validated(), bytes, MIDIFile.write and \(calls.count) sampler calls threw MIDIValueError (\(channel))"
)
