import ArgumentParser
import Pianola

/// The SoundFont and the ALSA output, shared by play and live (each gives its own default period).
struct DeviceOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("SoundFont (.sf2/.sf3).", valueName: "file"))
    var soundfont: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("ALSA device (see `pianola devices`).", valueName: "name"))
    var device = "default"

    @Option(
        help: ArgumentHelp(
            "Frames per period, 32…8192 (default: 256 for play, 128 for live).", valueName: "frames"))
    var period: Int?

    @Option(help: ArgumentHelp("Periods in the device buffer, 2…16.", valueName: "count"))
    var periods = 2

    @Option(help: ArgumentHelp("Sample rate in Hz.", valueName: "hz"))
    var rate = 44_100

    func validate() throws {
        if let period, !(32...8_192).contains(period) {
            throw ValidationError("--period must be between 32 and 8192 frames, got \(period)")
        }
        guard (2...16).contains(periods) else {
            throw ValidationError("--periods must be between 2 and 16, got \(periods)")
        }
        guard (8_000...192_000).contains(rate) else {
            throw ValidationError("--rate must be between 8000 and 192000 Hz, got \(rate)")
        }
    }

    /// The chosen (or discovered) SoundFont.
    func resolveSoundFont() throws(SoundFontError) -> SoundFontDiscovery.Resolution {
        try SoundFontDiscovery().resolve(explicit: soundfont)
    }

    /// The device as the options give it.
    func configuration(defaultPeriod: Int) -> ALSAOutput.Configuration {
        ALSAOutput.Configuration(
            device: device, sampleRate: rate, periodFrames: period ?? defaultPeriod, periodCount: periods)
    }

    /// The "SoundFont: …" and "Device: …" lines.
    func describe(_ font: SoundFontDiscovery.Resolution, _ output: ALSAOutput, latency: String? = nil) {
        Terminal.writeError("SoundFont: \(font.path) (\(font.source.explanation))\n")
        let buffer = "\(output.periodFrames) × \(output.periodCount) frames"
        Terminal.writeError(
            "Device: \(device), \(output.sampleFormat.rawValue), \(buffer)"
                + (latency ?? " (\(String(format1: output.bufferLatency * 1000)) ms)") + "\n")
    }
}
