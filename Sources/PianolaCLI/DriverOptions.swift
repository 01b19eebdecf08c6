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

    @Flag(
        name: .customLong("jack-multi"),
        help: ArgumentHelp(
            "JACK: a pair of output ports per MIDI channel (ch1_left, ch1_right … ch16_right), each channel synthesized apart, for a DAW to mix (autoconnected, only ch1 reaches a stereo card: connect the rest in the DAW, or add --no-autoconnect). Not with --channel-map."
        ))
    var jackMulti = false

    func validate() throws {
        guard (1...63).contains(jackName.utf8.count), !jackName.contains(":") else {
            throw ValidationError("--jack-name must be 1…63 bytes without ':', got '\(jackName)'")
        }
        if jackMulti && driver == .alsa { throw ValidationError("--jack-multi is for JACK: add --driver jack") }
    }

    /// The JACK client to play through, or nil for ALSA (`auto` asks whether a server runs).
    func jackClient() throws -> JACKOutput.Configuration? {
        var client = JACKOutput.Configuration(clientName: jackName, connectsToPlayback: !noAutoconnect)
        if jackMulti { client.portNames = ChannelRouting.everyChannelApartPortNames }
        switch driver {
        case .alsa: break
        case .jack: return client
        case .auto: if JACK.isServerRunning() { return client }
        }
        if jackMulti { throw CLIError("--jack-multi: no JACK server runs (start one, or leave out --jack-multi)") }
        return nil
    }

    /// Where the song's channels play: each apart with `--jack-multi`, else as `--channel-map` says.
    func channelRouting(_ channelMap: ChannelMapOptions) throws -> ChannelRouting? {
        guard jackMulti else { return try channelMap.routing() }
        guard channelMap.routes.isEmpty else {
            throw ValidationError("--jack-multi gives every MIDI channel its own ports: leave out --channel-map")
        }
        return .everyChannelApart
    }
}
