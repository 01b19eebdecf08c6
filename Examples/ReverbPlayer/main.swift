// Plays an audio file in a loop through a reverb, in real time, with the library: what Apple's
// classic AVAudioEngine example does. A file player feeds a reverb (medium hall, half wet), the
// reverb feeds the main mixer, the mixer plays on an ALSA device.
//
//   swift run reverb-player [FILE] [--device ALSA-DEVICE] [--seconds SECONDS]
//
// FILE is any file libsndfile reads (WAV, FLAC, Ogg, AIFF, MP3), mono or stereo, at any rate (the
// player converts it to the device's rate). Without one, the example writes a short drum loop of
// its own to a temporary WAV file and plays that. The device defaults to "default", the seconds
// (of audio, by the device's clock) to 10.
import Foundation
import Pianola

/// A two-second loop at 120 BPM: a kick on the beats, a clap on 2 and 4, a closed hi-hat on the
/// eighths, as a stereo 44.1 kHz WAV in the temporary directory.
func writeDrumLoop() throws -> String {
    let rate = 44_100
    var left = [Float](repeating: 0, count: rate * 2)
    var right = left
    var noise: UInt32 = 0x1234_5678
    func random() -> Float {
        noise = noise &* 1_664_525 &+ 1_013_904_223
        return Float(Int32(bitPattern: noise)) / Float(Int32.max)
    }
    for eighth in 0..<8 {
        let start = eighth * rate / 4
        for frame in 0..<rate / 4 {
            let t = Double(frame) / Double(rate)
            var (l, r): (Float, Float) = (0, 0)
            if eighth % 2 == 0 {  // kick: a sine falling from 150 to 50 Hz
                let phase = 2 * Double.pi * (50 * t + 100 * 0.03 * (1 - exp(-t / 0.03)))
                let kick = Float(sin(phase) * exp(-t / 0.12)) * 0.8
                (l, r) = (kick, kick)
            }
            if eighth % 4 == 2 {  // clap: noise, a little to the left
                let clap = random() * Float(exp(-t / 0.05)) * 0.4
                (l, r) = (l + clap, r + clap * 0.6)
            }
            let hat = random() * Float(exp(-t / 0.012)) * 0.15  // hi-hat, a little to the right
            left[start + frame] = l + hat * 0.6
            right[start + frame] = r + hat
        }
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-drum-loop.wav").path
    try AudioFile.write(
        AudioFile.Buffer(samples: zip(left, right).flatMap { [$0, $1] }, channelCount: 2, sampleRate: Double(rate)),
        to: path)
    return path
}

var file: String?
var device = "default"
var seconds = 10.0
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print("usage: reverb-player [FILE] [--device ALSA-DEVICE] [--seconds SECONDS]")
        exit(0)
    case "--device": device = arguments.popFirst() ?? device
    case "--seconds": seconds = arguments.popFirst().flatMap(Double.init) ?? seconds
    default: file = argument
    }
}
do {
    let path = try file ?? writeDrumLoop()

    let engine = AudioEngine()
    let player = AudioFilePlayerNode()
    let reverb = ReverbNode(preset: .mediumHall, wetDryMix: 50)
    try engine.attach(player)
    try engine.attach(reverb)
    try engine.connect(player, to: reverb)
    try engine.connect(reverb, to: engine.mainMixerNode)

    let output = try engine.connectOutput(toDevice: .init(device: device, sampleRate: 44_100, periodFrames: 1_024))
    // Loads (and decodes) the file off this thread, then loops it until the player stops.
    let clip = try await player.scheduleFile(path, options: .loops)
    // The generated loop is in memory now: its file goes, so the example leaves nothing behind.
    if file == nil { try? FileManager.default.removeItem(atPath: path) }
    try engine.start()
    player.play()
    print(
        "playing \(file ?? "a drum loop") (\(clip.channelCount == 1 ? "mono" : "stereo"), \(Int(clip.sampleRate)) Hz, "
            + "\(String(format: "%.2f", clip.duration)) s) in a loop through a medium hall on \(device)")
    // Seconds of audio by the device's clock (an unpaced device such as ALSA's file plugin runs
    // ahead of the wall clock), from about where the player started.
    let frames = (player.lastRenderTime?.sampleTime ?? 0) + Int64(seconds * 44_100)
    while (player.lastRenderTime?.sampleTime ?? 0) < frames {
        try await Task.sleep(nanoseconds: 20_000_000)
        if let failure = output.failure { throw failure }
    }
    player.stop()
    // Let the hall ring out for two seconds (of audio) before stopping the engine.
    let end = frames + 2 * 44_100
    while (player.lastRenderTime?.sampleTime ?? 0) < end {
        try await Task.sleep(nanoseconds: 20_000_000)
        if let failure = output.failure { throw failure }
    }
    engine.stop()
    print("done: \(output.xrunCount) underruns")
} catch {
    print("reverb-player: \(error)")
    exit(1)
}
