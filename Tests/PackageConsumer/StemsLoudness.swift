// Issue 43, point 10: renderStems applies options.loudness: the mix meets the target, and the
// stems, scaled by the same gain, still sum to it (measured by a LoudnessMeter within 0.1 LU).
// Exits 1 with a message otherwise; 0 with "skipped" when no SoundFont is installed.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

let fonts = ["/usr/share/sounds/sf3/FluidR3Mono_GM.sf3", "/usr/share/sounds/sf3/MuseScore_General.sf3"]
guard let font = fonts.first(where: { access($0, R_OK) == 0 }) else {
    print("point 10 skipped: no font (install fluidr3mono-gm-soundfont)")
    exit(0)
}

// Piano, bass and drums, a quarter note each beat for 8 beats (120 BPM, 480 PPQN).
var events: [MIDIFile.Event] = [
    MIDIFile.Event(tick: 0, .channel(.programChange(channel: 1, program: 33)))
]
for beat in 0..<8 {
    for (channel, note) in [(UInt8(0), UInt8(60 + beat % 5)), (1, 36 + UInt8(beat % 3)), (9, beat % 2 == 0 ? 36 : 38)] {
        events.append(MIDIFile.Event(tick: beat * 480, .channel(.noteOn(channel: channel, note: note, velocity: 100))))
        events.append(
            MIDIFile.Event(tick: beat * 480 + 400, .channel(.noteOff(channel: channel, note: note, velocity: 0))))
    }
}
events.sort { $0.tick < $1.tick }
events.append(MIDIFile.Event(tick: 8 * 480, .meta(.endOfTrack)))
let song = MIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [MIDIFile.Track(events: events)])

var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/pianola-stems-XXXXXX").utf8CString)
guard let made = mkdtemp(&template) else {
    print("point 10 FAILED: cannot make a temporary folder")
    exit(1)
}
let folder = String(cString: made)

/// Renders the stems at -20 LUFS and measures them; nil when the promise holds, else what failed.
func check() throws -> (String?, summary: String) {
    var options = RenderOptions()
    options.loudness = LoudnessTarget(integrated: -20, truePeakCeiling: -1)
    let renderer = try OfflineRenderer(soundFont: font, options: options)
    let result = try renderer.renderStems(song, toFolder: folder, mode: .channel)
    let mix = try AudioFile.read(from: folder + "/mix.wav")
    var sum = [Float](repeating: 0, count: mix.samples.count)
    for stem in result.stems where stem.kind != "mix" {
        let samples = try AudioFile.read(from: folder + "/" + stem.file).samples
        guard samples.count == sum.count else { return ("\(stem.file) is not as long as the mix", "") }
        for index in sum.indices { sum[index] += samples[index] }
    }
    func loudness(_ samples: [Float]) throws -> Double {
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: mix.sampleRate)
        samples.withUnsafeBufferPointer { meter.add(interleaved: $0) }
        return meter.integratedLoudness
    }
    let (summed, mixed) = (try loudness(sum), try loudness(mix.samples))
    let figures = "the stems sum to \((summed * 100).rounded() / 100) LUFS, the mix \((mixed * 100).rounded() / 100)"
    guard result.stems.count == 4, abs(summed + 20) < 0.1, abs(mixed + 20) < 0.1 else {
        return ("for a -20 LUFS target, \(figures) (\(result.stems.count - 1) stems)", figures)
    }
    return (nil, figures)
}

var outcome: (String?, summary: String)
do { outcome = try check() } catch { outcome = ("renderStems: \(error)", "") }
// What the render wrote, and the folder: no hidden intermediate file may be left there.
var hidden: [String] = []
if let directory = opendir(folder) {
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        if name == "." || name == ".." { continue }
        if name.hasPrefix(".") { hidden.append(name) }
        unlink(folder + "/" + name)
    }
    closedir(directory)
}
rmdir(folder)
if outcome.0 == nil && !hidden.isEmpty { outcome.0 = "hidden files left in the folder: \(hidden)" }
if let failure = outcome.0 {
    print("point 10 FAILED: \(failure)")
    exit(1)
}
print("point 10: renderStems with a -20 LUFS target: \(outcome.summary), within 0.1 LU")
