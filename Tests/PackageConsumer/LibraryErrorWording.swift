// Issue 43, point 15: the library's errors speak to an app in the library's words (calls and
// settings), never the `pianola` command's options (`--soundfont`, `--force`, `pianola fx list`,
// `PIANOLA_SOUNDFONT` advice, …). Provokes each error an app can meet and checks its text.
// Exits 1 with a message when one names a command-line option or command.
import Foundation
import Pianola

func fail(_ message: String) -> Never {
    print("point 15 FAILED: \(message)")
    exit(1)
}

var descriptions: [(what: String, text: String, names: String)] = []

// No SoundFont anywhere (the discovery's places given empty).
do {
    _ = try SoundFontDiscovery(environment: [:], systemFiles: [], systemDirectories: [], bundledCandidates: [])
        .resolve()
    fail("resolve() found a font with nowhere to look")
} catch {
    descriptions.append(("SoundFontDiscovery.resolve()", "\(error)", "SamplerNode.loadSoundFont(at:)"))
}
// An empty list of fonts, and a sampler with none loaded.
descriptions.append(("SoundFontError.notFound(path: \"\")", "\(SoundFontError.notFound(path: ""))", "OfflineRenderer"))
do {
    try SamplerNode().selectProgram(0, onChannel: 0)
    fail("selectProgram worked with no font loaded")
} catch {
    descriptions.append(("SamplerNode.selectProgram with no font", "\(error)", "SamplerNode.loadSoundFont(at:)"))
}
// An unknown effect.
do {
    _ = try EffectSpec.parse("chorus")
    fail("EffectSpec.parse took an unknown effect")
} catch {
    descriptions.append(("EffectSpec.parse(\"chorus\")", "\(error)", "EffectSpec.catalog"))
}
// A file that exists, without overwrite.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-consumer-words-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
_ = FileManager.default.createFile(atPath: folder + "/take.wav", contents: Data([1]))
do {
    _ = try AudioFileTap(path: folder + "/take.wav", channelCount: 2, sampleRate: 48_000)
    try? FileManager.default.removeItem(atPath: folder)
    fail("AudioFileTap opened a file that exists")
} catch {
    descriptions.append(("AudioFileTap on an existing file", "\(error)", "AudioFileTap.Settings.overwrite"))
}
try? FileManager.default.removeItem(atPath: folder)
// A render longer than the limit, and MIDI ports that do not exist.
descriptions.append(
    ("RenderError.tooLong", "\(RenderError.tooLong(seconds: 10_800, limit: 7_200))", "RenderOptions.maximumSeconds"))
descriptions.append(
    (
        "MIDIIOError.unknownSource", "\(MIDIIOError.unknownSource("Keystation", reason: "no such port"))",
        "ALSASequencerInput.ports()"
    ))
descriptions.append(
    (
        "MIDIIOError.unknownDestination", "\(MIDIIOError.unknownDestination("Synth", nearMatches: []))",
        "ALSASequencerOutput.destinations()"
    ))

for (what, text, names) in descriptions {
    for word in ["--", "`pianola", "pianola devices", "pianola fx", "set PIANOLA_SOUNDFONT", "fluid-soundfont-gm"]
    where text.contains(word) {
        fail("\(what) speaks the command line's words (\(word)): \(text)")
    }
    guard text.contains(names) else { fail("\(what) does not name \(names): \(text)") }
    print("\(what): \(text)")
}
print("point 15: \(descriptions.count) library errors name library calls and settings, none a pianola option")
