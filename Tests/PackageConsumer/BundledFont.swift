// Issue 43, point 16: the bundled font is found beside the app's executable (SwiftPM's resource
// folder), not through the Pianola checkout's path. Run from a folder outside the checkout, it
// finds the font, checks it is the one beside this executable, plays a note with it; then copies
// itself with the resource folder to a temporary folder and runs the copy (which must find the
// font in the copy), and runs a copy without the folder (whose error must list the places).
// Exits 1 with a message when the font is found elsewhere or not found.
import Foundation
import Pianola

func fail(_ message: String) -> Never {
    print("point 16 FAILED: \(message)")
    exit(1)
}

let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
let directory = (executable as NSString).deletingLastPathComponent
let expected = directory + "/Pianola_BundledSoundFont.resources/PianolaGM.sf2"

// A copy asked only for the path: print it, or the error.
if CommandLine.arguments.dropFirst().first == "--where" {
    do { print(try SoundFontDiscovery().bundledFont()) } catch {
        print("\(error)")
        exit(2)
    }
    exit(0)
}

let found: String
do { found = try SoundFontDiscovery().bundledFont() } catch { fail("\(error)") }
guard found == expected else { fail("found \(found), not \(expected) beside the executable") }

// It is a real font: a note sounds.
let sampler = try SamplerNode()
try sampler.loadSoundFont(at: found)
let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_096)
try sampler.startNote(60, withVelocity: 100, onChannel: 0)
sampler.render(into: buffer, inputs: .none, frameCount: 4_096, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
guard buffer.samples(channel: 0).contains(where: { abs($0) > 0.001 }) else { fail("the bundled font played silence") }

// Copies, run from elsewhere.
func runCopy(withResources: Bool) throws -> (status: Int32, output: String, folder: String) {
    let files = FileManager.default
    let folder = files.temporaryDirectory.appendingPathComponent("pianola-consumer-font-\(getpid())-\(withResources)")
        .path
    try? files.removeItem(atPath: folder)
    try files.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
    try files.copyItem(atPath: executable, toPath: folder + "/bin/app")
    if withResources {
        try files.copyItem(
            atPath: directory + "/Pianola_BundledSoundFont.resources",
            toPath: folder + "/bin/Pianola_BundledSoundFont.resources")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: folder + "/bin/app")
    process.arguments = ["--where"]
    process.currentDirectoryURL = URL(fileURLWithPath: folder)
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    try? files.removeItem(atPath: folder)
    return (process.terminationStatus, output.trimmingCharacters(in: .newlines), folder)
}
let copied = try runCopy(withResources: true)
let inCopy = copied.folder + "/bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2"
guard copied.status == 0, copied.output == inCopy else {
    fail("a copy with its resource folder found \(copied.output), not \(inCopy)")
}
let bare = try runCopy(withResources: false)
guard bare.status == 2,
    [
        bare.folder + "/bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2", bare.folder + "/bin/PianolaGM.sf2",
        bare.folder + "/share/pianola/PianolaGM.sf2",
    ].allSatisfy(bare.output.contains)
else { fail("a copy without its resource folder said: \(bare.output)") }
print("a copy elsewhere finds \(copied.output); without the folder: \(bare.output)")
print("point 16: bundled font found at \(found), beside the executable")
