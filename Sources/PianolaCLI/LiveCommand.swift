import ArgumentParser
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

struct LiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Play a MIDI keyboard (or any ALSA sequencer source) through a SoundFont, live.",
        discussion: """
            Pianola appears in the ALSA sequencer as client `Pianola` with a port that keyboards and \
            programs connect to (`aconnect`, or `--connect` from this side; `pianola devices` lists \
            the sources). Every event is stamped on arrival and played a fixed --delay later than it \
            arrived, plus the output buffer (--period × --periods): the latency is the same for every \
            note, so timing does not jitter with the buffer.

            With --driver jack, Pianola is a JACK client instead: output ports out_1, out_2 and a MIDI \
            input port midi_in, whose events sound at their frames inside JACK's period (no added \
            latency); --connect names JACK MIDI ports (or clients), --autoconnect takes the \
            physical MIDI sources there are at the start.

            On a terminal: one status line (sources and their activity, voices, level, latency, \
            underruns) and `q` to quit. Ctrl-C (exit 130) or SIGTERM (exit 0, a requested stop) end it \
            cleanly too; --record and --record-audio are saved then. With both, the MIDI file has \
            each message where the audio file has it (sample-aligned).

            Examples:
              pianola live --autoconnect
              pianola live --connect 'USB Keyboard' --period 64 --periods 3
              pianola live --connect 20:0 --program 1:4 --record take1.mid
              pianola live --autoconnect --record take.mid --record-audio take.wav
              pianola live --rtpmidi 5004                    # a Mac or an iPad joins
              pianola live --rtpmidi-connect mac.local:5004  # or join its session
              pianola live --driver jack --connect a2j --record take.mid
              pianola live --connect 'USB Keyboard' --thru 'USB MIDI'  # and a synth
            """)

    @OptionGroup var soundFonts: SoundFontOptions

    @OptionGroup var deviceOptions: DeviceOptions

    @OptionGroup var driverOptions: DriverOptions

    @OptionGroup var synth: SynthOptions

    @OptionGroup var engineOptions: EngineOptions

    @Option(
        name: .customLong("connect"),
        help: ArgumentHelp(
            "A source to connect: CLIENT:PORT or a client name (repeatable); connected again when it comes back. With --driver jack: a JACK MIDI port or client.",
            valueName: "source"))
    var connections: [String] = []

    @Flag(help: "Connect every MIDI source, including those plugged in later.")
    var autoconnect = false

    @Option(
        name: .customLong("thru"),
        help: ArgumentHelp(
            "Forward what comes in (sequencer and network MIDI) to an ALSA sequencer port at once, as it comes: an external synth layered with the sampler. CLIENT:PORT or a client name, as `pianola devices` lists MIDI destinations (repeatable).",
            valueName: "destination"))
    var thru: [String] = []

    @OptionGroup var network: NetworkOptions

    @Option(help: ArgumentHelp("Write what is played to this MIDI file (tempo 120) on exit.", valueName: "file.mid"))
    var record: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Fixed delay from arrival to sound, in ms, on top of the buffer (0…100).", valueName: "ms"))
    var delay = 1.0

    @Option(
        help: ArgumentHelp(
            "On exit, write each note's latency (arrival to the output playing it, by the device's own account) as JSON: percentiles and a histogram.",
            valueName: "file.json"))
    var latencyReport: String?

    @OptionGroup var effectOptions: EffectOptions

    @OptionGroup var channelMap: ChannelMapOptions

    @OptionGroup var audioRecording: AudioRecordingOptions

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (0...100).contains(delay) else { throw ValidationError("--delay must be between 0 and 100 ms") }
        try engineOptions.check(synth: synth, soundFonts: soundFonts)
        if engineOptions.engine == .native && !channelMap.routes.isEmpty {
            throw ValidationError("--channel-map needs FluidSynth's engine: not with --engine native")
        }
        if engineOptions.engine == .native && !synth.mutedChannels.isEmpty {
            throw ValidationError("--mute and --solo need FluidSynth's engine live: not with --engine native")
        }
        if !thru.isEmpty && driverOptions.driver == .jack {
            throw ValidationError(
                "--thru forwards ALSA sequencer and network MIDI; with --driver jack, route JACK MIDI there")
        }
        _ = try driverOptions.channelRouting(channelMap)
    }

    func run() throws {
        Terminal.trapInterrupts()
        let fonts = try soundFonts.resolve()
        var configuration = LiveSession.Configuration(
            soundFonts: fonts.map(\.path), device: deviceOptions.configuration(defaultPeriod: 128))
        configuration.sampler = try soundFonts.liveSettings(synth.settings)
        configuration.engine = engineOptions.engine
        configuration.gainDecibels = synth.gain
        configuration.sources = connections
        configuration.autoconnect = autoconnect
        configuration.thru = thru
        configuration.network = network.configuration
        configuration.delay = .microseconds(Int64((delay * 1000).rounded()))
        configuration.effects = try effectOptions.specs()
        configuration.recordsMIDI = record != nil
        configuration.recordsAudio = audioRecording.recording
        configuration.channelRouting = try driverOptions.channelRouting(channelMap)
        configuration.jack = try driverOptions.jackClient()
        let session: LiveSession
        do { session = try LiveSession(configuration) } catch {
            switch error {
            case .device: throw CLIError("\(error); \(Hints.devices)")
            case .midi(.sequencerUnavailable):
                throw CLIError(
                    "\(error); network MIDI works without it: --rtpmidi PORT, or --rtpmidi-connect HOST:PORT")
            default: throw error
            }
        }
        if !quiet {
            let output = session.output
            let latency =
                session.jack != nil
                ? "; latency \(String(format1: session.latencyMilliseconds)) ms (a period)"
                : "; latency \(String(format1: session.latencyMilliseconds)) ms (buffer "
                    + "\(String(format1: output.bufferLatency * 1000)) + delay \(String(format1: delay)))"
            SoundFontOptions.describe(fonts)
            deviceOptions.describe(output, latency: latency)
            for note in session.notes { Terminal.writeError("note: \(note)\n") }
        }
        try session.start()
        if !quiet {
            if session.notes.contains(.realTimeRefused) {
                Terminal.writeError("note: \(LiveSession.Note.realTimeRefused)\n")
            }
            announceInputs(of: session)
        }
        let failure = follow(session)
        session.stop()
        if let record {
            try session.writeRecording(to: record)
            if !quiet {
                Terminal.writeError("Recorded \(counted(session.recorder?.count ?? 0, "event")) to \(record)\n")
            }
        }
        let recordingFailure = AudioRecordingOptions.report(session.audioTap, quiet: quiet)
        if let latencyReport { try session.latencyReport().write(to: latencyReport) }
        if let path = network.stateReport, let listener = session.network {
            try NetworkSessionReport(listener: listener).write(to: path)
        }
        if !quiet {
            for event in session.takeEvents() { Terminal.writeError("\(event)\n") }
            if let listener = session.network {
                let journals = listener.sessions.reduce(0) { $0 + $1.malformedJournals }
                Terminal.writeError(
                    "network MIDI: \(counted(listener.sessions.count, "session")), "
                        + "\(counted(listener.malformedPacketCount, "network packet")) dropped "
                        + "(malformed, or not from their session's peer), "
                        + "\(counted(journals, "recovery journal")) malformed\n")
            }
            let status = session.status()
            Terminal.writeError(
                "\(counted(status.deliveredCount, "event")) played, \(status.lateCount) late, "
                    + "\(counted(status.underruns, "underrun"))\n")
        }
        if let failure = failure ?? recordingFailure { throw CLIError(failure) }
        // Ctrl-C is an interruption (130); SIGTERM is how a service manager or a script stops a
        // live session on purpose, a clean stop (0), as `q` is.
        if Terminal.interruptSignal == SIGINT { throw Terminal.interruptExitCode }
    }

    /// The "MIDI input: …" lines once the ports are open.
    private func announceInputs(of session: LiveSession) {
        if let jack = session.jack, let port = jack.midiPortName {
            Terminal.writeError("MIDI input: JACK port \(port) (events at their frames in the period)\n")
        }
        if let input = session.sequencerInput {
            Terminal.writeError("MIDI input: ALSA sequencer port \(input.address) (Pianola:Input)\n")
        }
        if let listener = session.network, network.listen != nil {
            Terminal.writeError(
                "MIDI input: network sessions on \(network.listening(host: listener.host, port: listener.port))\n"
            )
        }
        if let thru = session.thru {
            let names = thru.destinations.map(\.name).joined(separator: ", ")
            Terminal.writeError("MIDI thru: port \(thru.address) → \(names) (what comes in, at once)\n")
        }
        if let name = session.advertisement?.registeredName {
            Terminal.writeError("MIDI input: advertised over mDNS as '\(name)' (_apple-midi._udp)\n")
        }
        for case .notAdvertised(let reason) in session.notes {
            Terminal.writeError("note: \(LiveSession.Note.notAdvertised(reason: reason))\n")
        }
        for peer in network.peers {
            Terminal.writeError(
                "MIDI input: inviting \(peer) to a network session as 'Pianola' (from port \(session.network?.port ?? 0))\n"
            )
        }
    }

    /// Shows the session until `q`, a signal or a failure (returned).
    private func follow(_ session: LiveSession) -> String? {
        let keys = Terminal.isInteractive && isatty(0) == 1 ? KeyReader() : nil
        defer {
            keys?.restore()
            if !quiet && keys != nil { Terminal.writeError("\r\u{1B}[K") }
        }
        var lastSummary = Terminal.monotonicSeconds()
        while Terminal.interruptSignal == nil && keys?.read() != .quit {
            if let failure = session.failure { return failure }
            let events = session.takeEvents()
            if !quiet, keys != nil {
                // Session events above the status line (which is drawn again below them).
                for event in events { Terminal.writeError("\r\u{1B}[K\(event)\n") }
                Terminal.writeError("\r" + Self.statusLine(session.sources, session.status()) + "\u{1B}[K")
            } else if !quiet {
                // Without a terminal: a line when a source comes, goes or fails, and a summary every 10 s.
                for event in events { Terminal.writeError("\(event)\n") }
                if Terminal.monotonicSeconds() - lastSummary >= 10 {
                    lastSummary = Terminal.monotonicSeconds()
                    let status = session.status()
                    Terminal.writeError(
                        "\(counted(status.deliveredCount, "event")), \(counted(status.voiceCount, "voice")), "
                            + "\(counted(status.underruns, "underrun"))\n")
                }
            }
            usleep(50_000)
        }
        return nil
    }

    static func statusLine(_ sources: [LiveSession.Source], _ status: LiveStatus) -> String {
        let now = MIDITimestamp.now()
        // Connected sources (● when playing now), and those that could not be connected (✗).
        // (A network source's name is its peer's choice: escaped.)
        let names = sources.filter { $0.isConnected || $0.failure != nil }.map { source in
            let name = PrintableText.escaped(source.name)
            guard source.isConnected else { return "✗ " + name }
            let active = source.lastArrival > 0 && now &- source.lastArrival < 300_000_000
            return (active ? "● " : "○ ") + name
        }
        let inputs = names.isEmpty ? "no MIDI source connected" : names.joined(separator: ", ")
        return Terminal.fit(
            "\(inputs)  \(counted(status.voiceCount, "voice"))  \(String(decibels: status.peak)) dB  "
                + "\(String(format1: status.latencyMilliseconds)) ms  \(counted(status.underruns, "xrun"))")
    }
}
