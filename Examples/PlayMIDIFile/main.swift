// Plays a MIDI file through a SoundFont on an ALSA device, in real time, with the library:
// the engine, a sampler, the music player and the ALSA output that pulls the graph. It shows
// the transport: play, pause, seek back to the start, play to the end.
//
//   swift run play-midi-file song.mid [DEVICE] [SOUNDFONT.sf2]     (DEVICE defaults to "default")
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let path = arguments.first else {
    print("usage: play-midi-file SONG.mid [ALSA-DEVICE] [SOUNDFONT.sf2]")
    exit(2)
}
do {
    let sequence = try MusicSequence(path: path)
    let font = try SoundFontDiscovery().resolve(explicit: arguments.count > 2 ? arguments[2] : nil)
    let sampler = try SamplerNode()
    try sampler.loadSoundFont(at: font.path)

    let engine = AudioEngine()
    try engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)
    let player = MusicPlayer(sequence: sequence, destination: sampler)
    try engine.addRenderObserver(player)

    // The engine plays through the device it is connected to; the player is driven by the
    // device's audio thread (the sample clock), and its transport works from any thread.
    let device = arguments.count > 1 ? arguments[1] : "default"
    let output = try engine.connectOutput(toDevice: .init(device: device, periodFrames: 256, periodCount: 2))
    try engine.start()
    player.play()
    print(
        "playing \(path) on \(device) (\(output.sampleFormat.rawValue), \(output.periodFrames) × \(output.periodCount) frames)"
    )
    // Play two seconds, pause for half a second, go back to the start, then play to the end.
    try await Task.sleep(nanoseconds: 2_000_000_000)
    player.pause()
    try await Task.sleep(nanoseconds: 500_000_000)
    player.seek(toSeconds: 0)
    player.play()
    while !player.isFinished {
        try await Task.sleep(nanoseconds: 100_000_000)
        if let failure = output.failure { throw failure }
    }
    try await Task.sleep(nanoseconds: 1_000_000_000)  // the release tail
    engine.stop()
    print("done: \(output.xrunCount) underruns")
} catch {
    print("play-midi-file: \(error)")
    exit(1)
}
