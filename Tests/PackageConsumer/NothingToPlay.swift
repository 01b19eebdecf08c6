// Issue 43, point 9: with nothing to play with, the library throws instead of playing silence.
// An AudioSequencer playing into a sampler that never loaded a SoundFont, and an OfflineRenderer
// given no SoundFont. Exits 1 with a message when either plays (or renders) anyway.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    print("point 9 FAILED: \(message)")
    exit(1)
}

// A one-note song, made in code.
let song = MusicSequence(
    file: MIDIFile(
        format: .singleTrack, division: .ticksPerQuarterNote(480),
        tracks: [
            MIDIFile.Track(events: [
                MIDIFile.Event(tick: 0, .channel(.noteOn(channel: 0, note: 60, velocity: 100))),
                MIDIFile.Event(tick: 480, .channel(.noteOff(channel: 0, note: 60, velocity: 0))),
                MIDIFile.Event(tick: 480, .meta(.endOfTrack)),
            ])
        ]))

let sampler = try SamplerNode()  // no SoundFont loaded
let engine = AudioEngine()
try engine.attach(sampler)
try engine.connect(sampler, to: engine.mainMixerNode)
try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
let sequencer = AudioSequencer(audioEngine: engine)
sequencer.load(song)
do throws(AudioSequencerError) {
    try sequencer.start()
    fail("AudioSequencer started into a sampler without a SoundFont (it would play silence)")
} catch .noSoundFont(let node) {
    print("AudioSequencer.start(): noSoundFont(node: \"\(node)\"): \(AudioSequencerError.noSoundFont(node: node))")
} catch {
    fail("AudioSequencer.start() threw \(error), not noSoundFont")
}

do throws(SoundFontError) {
    _ = try OfflineRenderer(soundFonts: [String]())
    fail("OfflineRenderer(soundFonts: []) was made (its renders would be silence)")
} catch .notFound(let path) where path.isEmpty {
    print("OfflineRenderer(soundFonts: []): SoundFontError.notFound")
} catch {
    fail("OfflineRenderer(soundFonts: []) threw \(error), not notFound")
}
print("point 9: AudioSequencer without a font throws noSoundFont, OfflineRenderer without one throws notFound")
