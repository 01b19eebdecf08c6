// Issue 43, point 13: a hand-written render loop can render a song whole, its tail included.
// `while !sequencer.isFinished` stops at the last event with the music still sounding;
// `while !sequencer.isFinished(includingTail: true)` goes on until the output has died away.
// Exits 1 with a message otherwise; 0 with "skipped" when no SoundFont is installed.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

let fonts = ["/usr/share/sounds/sf3/FluidR3Mono_GM.sf3", "/usr/share/sounds/sf3/MuseScore_General.sf3"]
guard let font = fonts.first(where: { access($0, R_OK) == 0 }) else {
    print("point 13 skipped: no font (install fluidr3mono-gm-soundfont)")
    exit(0)
}

func decibels(_ value: Float) -> String {
    value > 0 ? String(Int((20 * log10(Double(value))).rounded())) + " dBFS" : "silence"
}

// A C major chord held for a second (120 BPM, 480 PPQN), on a piano.
let notes: [UInt8] = [60, 64, 67]
let song = MusicSequence(
    file: MIDIFile(
        format: .singleTrack, division: .ticksPerQuarterNote(480),
        tracks: [
            MIDIFile.Track(
                events: notes.map { MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: $0, velocity: 100))) }
                    + notes.map { MIDIFile.Event(tick: 960, .channel(.noteOff(channel: 0, note: $0, velocity: 0))) }
                    + [MIDIFile.Event(tick: 960, .meta(.endOfTrack))])
        ]))

let sampler = try SamplerNode()
try sampler.loadSoundFont(at: font)
let engine = AudioEngine()
try engine.attach(sampler)
try engine.connect(sampler, to: engine.mainMixerNode)
try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
let sequencer = AudioSequencer(audioEngine: engine)
sequencer.load(song)
try sequencer.start()
let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)

/// The RMS and the peak of the buffer's 512 frames.
func level() -> (rms: Float, peak: Float) {
    let samples = buffer.interleaved()
    let power = samples.reduce(0) { $0 + $1 * $1 } / Float(samples.count)
    return (power.squareRoot(), samples.map(abs).max() ?? 0)
}

var last = (rms: Float(0), peak: Float(0))
while !sequencer.isFinished {
    try engine.renderOffline(frameCount: 512, into: buffer)
    last = level()
}
let endOfSong = engine.currentSampleTime
guard last.rms > 0.001 else {
    print(
        "point 13 FAILED: the song's last quantum is at \(decibels(last.rms)) RMS: nothing rings after it to wait for")
    exit(1)
}
let atLastEvent = last
while !sequencer.isFinished(includingTail: true) {
    try engine.renderOffline(frameCount: 512, into: buffer)
    last = level()
    if engine.currentSampleTime - endOfSong > 60 * 44_100 {
        print("point 13 FAILED: isFinished(includingTail: true) still false 60 s after the song's end")
        exit(1)
    }
}
let tailSeconds = Double(engine.currentSampleTime - endOfSong) / 44_100
guard last.peak < AudioEngine.silenceThreshold, tailSeconds > 0.1 else {
    print("point 13 FAILED: the tail ended after \(tailSeconds) s at a peak of \(decibels(last.peak))")
    exit(1)
}
print(
    "point 13: isFinished stopped at \(decibels(atLastEvent.rms)) RMS; isFinished(includingTail: true) rendered "
        + "\((tailSeconds * 100).rounded() / 100) s more, to a peak of \(decibels(last.peak))")
