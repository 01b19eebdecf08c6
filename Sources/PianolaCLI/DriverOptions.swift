import ArgumentParser
import Pianola

/// Which audio system plays: ALSA (the device options) or a JACK server.
struct DriverOptions: ParsableArguments {
    /// The audio systems `--driver` names.
    enum Driver: String, ArgumentChoice {
        case alsa, jack, auto
    }

    @Option(
        help: ArgumentHelp(
            "Audio output: alsa (the -d device), jack (a JACK server; under PipeWire run through pw-jack), or auto (jack when a JACK server runs).",
            valueName: "driver"),
        completion: Driver.completion, transform: Driver.parser(for: "--driver"))
    var driver: Driver = .alsa

    @Option(
        name: .customLong("jack-name"),
        help: ArgumentHelp("JACK client name (JACK adds a number if it is taken).", valueName: "name"))
    var jackName = "pianola"

    @Flag(
        name: .customLong("no-autoconnect"),
        help: "JACK: leave the output ports unconnected (by default they go to the system's playback ports).")
    var noAutoconnect = false

    func validate() throws {
        guard (1...63).contains(jackName.utf8.count), !jackName.contains(":") else {
            throw ValidationError("--jack-name must be 1…63 bytes without ':', got '\(jackName)'")
        }
    }

    /// The JACK client to play through, or nil for ALSA (`auto` asks whether a server runs).
    func jackClient() -> JACKOutput.Configuration? {
        let client = JACKOutput.Configuration(clientName: jackName, connectsToPlayback: !noAutoconnect)
        switch driver {
        case .alsa: return nil
        case .jack: return client
        case .auto: return JACK.isServerRunning() ? client : nil
        }
    }
}
