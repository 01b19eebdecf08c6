// Plays a MIDI keyboard through a SoundFont, live, with the library: an ALSA sequencer input, the
// scheduler that places each arrival at a fixed delay on the audio thread, a sampler and the ALSA
// output. It records what is played and writes it as a MIDI file when it stops.
//
//   swift run live-keyboard [SOURCE] [SECONDS] [DEVICE] [SOUNDFONT.sf2]
//
// SOURCE is a sequencer port (`CLIENT:PORT` or a client name; "auto" connects every source,
// including those plugged in later). It plays for SECONDS (default 30) on DEVICE ("default"),
// then writes live-keyboard.mid.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let source = arguments.first ?? "auto"
let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 30 : 30
let device = arguments.count > 2 ? arguments[2] : "default"
do {
    // The input: a sequencer client with a port keyboards connect to.
    let input = try ALSASequencerInput(clientName: "Live Keyboard")
    if source == "auto" {
        input.autoconnect = true
    } else {
        try input.connect(source)
    }

    // The graph: a sampler into the main mixer.
    let font = try SoundFontDiscovery().resolve(explicit: arguments.count > 3 ? arguments[3] : nil)
    let sampler = try SamplerNode()
    try sampler.loadSoundFont(at: font.path)
    let engine = AudioEngine()
    engine.attach(sampler)
    try engine.connect(sampler, to: engine.mainMixerNode)

    // The scheduler drains the input's queue on the audio thread, 1 ms after each arrival.
    let scheduler = LiveMIDIScheduler(queues: [input.queue], destination: sampler, delay: .milliseconds(1))
    try engine.addRenderObserver(scheduler)
    let recorder = MIDIRecorder()
    input.messageHandler = { message, arrival in recorder.record(message, at: arrival) }

    let output = try engine.connectOutput(toDevice: .init(device: device, periodFrames: 128, periodCount: 2))
    try engine.start()
    input.start()
    print(
        "Live Keyboard (\(input.address)) → \(device): latency \(output.bufferLatency * 1000 + 1) ms; playing for \(seconds) s"
    )
    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))

    input.stop()
    sampler.allNotesOff()
    try await Task.sleep(nanoseconds: 100_000_000)
    engine.stop()
    try recorder.write(to: "live-keyboard.mid")
    print("\(scheduler.deliveredCount) events played, \(recorder.count) recorded to live-keyboard.mid")
} catch {
    print("live-keyboard: \(error)")
    exit(1)
}
