// Plays a MIDI keyboard through a SoundFont, live, with the library's live session: an ALSA
// sequencer input, the scheduler that places each arrival at a fixed delay on the audio thread,
// a sampler and the ALSA output. It records what is played and writes it as a MIDI file when it
// stops.
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
    let font = try SoundFontDiscovery().resolve(explicit: arguments.count > 3 ? arguments[3] : nil)
    var configuration = LiveSession.Configuration(
        soundFonts: [font.path], device: .init(device: device, periodFrames: 128, periodCount: 2))
    configuration.clientName = "Live Keyboard"
    if source == "auto" {
        configuration.autoconnect = true
    } else {
        configuration.sources = [source]
    }
    configuration.delay = .milliseconds(1)
    configuration.recordsMIDI = true

    let session = try LiveSession(configuration)
    try session.start()
    print(
        "Live Keyboard (\(session.sequencerInput?.address ?? "?")) → \(device): latency \(session.latencyMilliseconds) ms; playing for \(seconds) s"
    )
    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))

    session.stop()
    try session.writeRecording(to: "live-keyboard.mid")
    print(
        "\(session.status().deliveredCount) events played, \(session.recorder?.count ?? 0) recorded to live-keyboard.mid"
    )
} catch {
    print("live-keyboard: \(error)")
    exit(1)
}
