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

    /// A sampler at the chosen rate with the chosen (or discovered) SoundFont loaded.
    func loadSampler() throws(CLIError) -> (SamplerNode, SoundFontDiscovery.Resolution) {
        let font: SoundFontDiscovery.Resolution
        do { font = try SoundFontDiscovery().resolve(explicit: soundfont) } catch { throw CLIError(error.description) }
        var settings = SamplerNode.Settings()
        settings.sampleRate = Double(rate)
        do {
            let sampler = try SamplerNode(settings: settings)
            try sampler.loadSoundFont(at: font.path)
            return (sampler, font)
        } catch { throw CLIError(error.description) }
    }

    /// Opens the device for `engine` (and makes it the engine's output device).
    func connectOutput(_ engine: AudioEngine, defaultPeriod: Int) throws(CLIError) -> ALSAOutput {
        do {
            return try engine.connectOutput(
                toDevice: .init(
                    device: device, sampleRate: rate, periodFrames: period ?? defaultPeriod, periodCount: periods))
        } catch { throw CLIError(error.description) }
    }
}
