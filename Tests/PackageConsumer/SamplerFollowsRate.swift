// Issue 43, point 14: a SamplerNode follows the rate of the engine it plays in, as
// AVAudioUnitSampler follows its connection: one made for 44.1 kHz (the default) in a 48 kHz
// engine renders the samples one made for 48 kHz does. What cannot follow names
// SamplerNode.Settings.sampleRate. Exits 1 with a message otherwise; 0 with "skipped" when no
// SoundFont is installed.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

let fonts = ["/usr/share/sounds/sf3/FluidR3Mono_GM.sf3", "/usr/share/sounds/sf3/MuseScore_General.sf3"]
guard let font = fonts.first(where: { access($0, R_OK) == 0 }) else {
    print("point 14 skipped: no font (install fluidr3mono-gm-soundfont)")
    exit(0)
}

/// 8192 frames of `sampler` playing A4 in an engine at 48 kHz (interleaved).
func played(by sampler: SamplerNode) throws -> [Float] {
    try sampler.loadSoundFont(at: font)
    let engine = AudioEngine()
    try engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 512)
    try sampler.startNote(69, withVelocity: 100, onChannel: 0)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 8_192)
    try engine.renderOffline(frameCount: 8_192, into: buffer)
    return buffer.interleaved()
}

var made48k = SamplerNode.Settings()
made48k.sampleRate = 48_000
let expected = try played(by: SamplerNode(settings: made48k))
let following: [Float]
do {
    following = try played(by: SamplerNode())  // made for 44 100 Hz
} catch {
    print("point 14 FAILED: a 44.1 kHz sampler in a 48 kHz engine: \(error)")
    exit(1)
}
guard following.contains(where: { abs($0) > 0.01 }), following == expected else {
    print("point 14 FAILED: the 44.1 kHz sampler in a 48 kHz engine does not play as one made for 48 kHz")
    exit(1)
}

// A sampler loading its samples on demand, with a font loaded, cannot follow: the error says
// what to set.
var onDemand = SamplerNode.Settings()
onDemand.sampleLoading = .onDemand
do {
    _ = try played(by: SamplerNode(settings: onDemand))
    print("point 14 FAILED: a sampler loading on demand played at another rate than it was made for")
    exit(1)
} catch {
    guard "\(error)".contains("SamplerNode.Settings.sampleRate") else {
        print("point 14 FAILED: the error does not name SamplerNode.Settings.sampleRate: \(error)")
        exit(1)
    }
}
print(
    "point 14: a 44.1 kHz sampler in a 48 kHz engine renders as one made for 48 kHz; "
        + "what cannot follow names SamplerNode.Settings.sampleRate")
