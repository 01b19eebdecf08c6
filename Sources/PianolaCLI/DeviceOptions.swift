import ArgumentParser
import Pianola

/// The ALSA output, shared by play and live (each gives its own default period).
struct DeviceOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("ALSA device (see `pianola devices`).", valueName: "name"))
    var device = "default"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Frames per period, 32…8192 (default: 256 for play, 128 for live).", valueName: "frames"))
    var period: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Periods in the device buffer, 2…16.", valueName: "count"))
    var periods = 2

    @Option(
        name: [.customShort("r"), .long], parsing: .unconditional,
        help: ArgumentHelp("Sample rate in Hz, 8000…192000.", valueName: "hz"))
    var rate = 44_100

    func validate() throws {
        if let period, !(32...8_192).contains(period) {
            throw ValidationError("--period must be between 32 and 8192 frames, got \(period)")
        }
        guard (2...16).contains(periods) else {
            throw ValidationError("--periods must be between 2 and 16, got \(periods)")
        }
        guard BatchJob.sampleRates.contains(Double(rate)) else {
            throw ValidationError("--rate must be between 8000 and 192000 Hz, got \(rate)")
        }
    }

    /// The device as the options give it.
    func configuration(defaultPeriod: Int) -> ALSAOutput.Configuration {
        ALSAOutput.Configuration(
            device: device, sampleRate: Double(rate), periodFrames: period ?? defaultPeriod, periodCount: periods)
    }

    /// The "Device: …" line (for a JACK client: its name, the server's rate and period, its ports).
    func describe(_ output: any SessionOutput, latency: String? = nil) {
        let milliseconds = latency ?? " (\(String(format1: output.bufferLatency * 1000)) ms)"
        if let jack = output as? JACKOutput {
            let ports = jack.portNames.map { $0.split(separator: ":").last.map(String.init) ?? $0 }
            Terminal.writeError(
                "JACK: client \(jack.clientName), \(Int(jack.sampleRate)) Hz, \(jack.periodFrames) frames"
                    + milliseconds + ", ports "
                    + (ports.count > 4
                        ? "\(ports[0]) … \(ports[ports.count - 1]) (\(ports.count))"
                        : ports.joined(separator: ", ")) + "\n")
            return
        }
        if let clock = output as? ClockOutput {
            Terminal.writeError(
                "No audio device: MIDI out only, kept to the system clock, \(Int(clock.sampleRate)) Hz, "
                    + "\(clock.periodFrames) × \(clock.periodCount) frames" + milliseconds + "\n")
            return
        }
        guard let output = output as? ALSAOutput else { return }
        let buffer = "\(output.periodFrames) × \(output.periodCount) frames"
        Terminal.writeError("Device: \(device), \(output.sampleFormat.rawValue), \(buffer)" + milliseconds + "\n")
    }
}
