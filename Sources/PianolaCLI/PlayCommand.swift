import ArgumentParser
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play MIDI files through a SoundFont on an ALSA device or a JACK server, with a live transport.",
        discussion: """
            On a terminal: one status line (position, bar:beat, tempo, voices, level, underruns, \
            lyrics) and keys: space pause/resume, ←/→ seek 5 s, ↑/↓ speed, n/p next/previous file, \
            l loop on/off, q quit. Into a pipe or a file: one line as each song ends. Ctrl-C stops \
            cleanly (notes released, device drained).

            The I/O buffer is --period × --periods frames: bigger is safer against crackles, \
            smaller answers sooner.

            Examples:
              pianola play song.mid
              pianola play *.mid --device hw:1,0 --period 512 --periods 3
              pianola play song.kar --speed 0.8 --transpose -2 --loop
              pianola play song.mid --record-audio heard.wav
              pianola play song.mid -d hw:1 --channel-map 10:3-4   (drums on outputs 3-4)
              pianola play song.mid --driver jack --jack-name synth
              pianola play song.mid --driver jack --jack-multi   (a port pair a channel)
              pianola play song.mid --driver jack --transport follow   (a DAW starts it)
              pianola play song.mid --rtpmidi-connect 192.168.1.20:5004   (to a Mac, too)
              pianola play song.mid --midi-out 'USB MIDI' --midi-out-only   (a synth)
              pianola play song.mid --route 10:'Drum Machine'   (the drums to it)

            With --midi-out and --route, messages are scheduled on an ALSA sequencer queue for \
            the time the sound is heard (the kernel delivers them then); pausing, seeking and \
            stopping send All Notes Off, a seek also resets the controllers and chases the song's \
            programs and controllers at the new place, and quitting (q, Ctrl-C, SIGTERM) resets \
            every destination.

            With --midi-out-only, no ALSA device is opened: the system clock keeps the songs' \
            time, so a machine without a sound card sends them in their own time. Songs sent to \
            MIDI destinations through a device that does not pace playback (ALSA's null) are kept \
            to the clock too.

            With --transport follow, the song's time is the JACK transport's: it plays while the \
            transport rolls, from the transport's place, and waits (silent) while it stands; space \
            starts and stops the transport for every client, ←/→ locate it. It runs until q or \
            Ctrl-C. --transport master also publishes the song's bars, beats and tempo to the other \
            clients (timebase master), starts the transport from --start (or the beginning) and \
            stops it at the song's end.
            """)

    /// What `--transport` names.
    enum TransportChoice: String, ArgumentChoice {
        case follow, master

        var mode: JACKOutput.Transport { self == .follow ? .followed : .timebaseMaster }
    }

    @Argument(
        help: ArgumentHelp("MIDI files to play, in order.", valueName: "midi-file"),
        completion: .file(extensions: midiFileExtensions))
    var files: [String]

    @OptionGroup var soundFonts: SoundFontOptions

    @OptionGroup var deviceOptions: DeviceOptions

    @OptionGroup var driverOptions: DriverOptions

    @OptionGroup var synth: SynthOptions

    @OptionGroup var engineOptions: EngineOptions

    @OptionGroup var song: SongOptions

    @OptionGroup var inputLimit: InputLimitOptions

    @Flag(help: "Loop each file.")
    var loop = false

    @Option(
        help: ArgumentHelp(
            "JACK transport: follow (play the song while the shared transport rolls, from its place) or master (follow it, publish the song's bars and tempo, and start it). Needs --driver jack.",
            valueName: "mode"),
        completion: TransportChoice.completion, transform: TransportChoice.parser(for: "--transport"))
    var transport: TransportChoice?

    @OptionGroup var effectOptions: EffectOptions

    @OptionGroup var channelMap: ChannelMapOptions

    @OptionGroup var audioRecording: AudioRecordingOptions

    @OptionGroup var network: NetworkOptions

    @Option(
        name: .customLong("midi-out"),
        help: ArgumentHelp(
            "Send the songs to an ALSA sequencer port too (an external synth, a MIDI interface, a program): CLIENT:PORT or a client name, as `pianola devices` lists them (repeatable).",
            valueName: "destination"))
    var midiOut: [String] = []

    @Option(
        name: .customLong("route"),
        help: ArgumentHelp(
            "Send one MIDI channel (1-16) to an ALSA sequencer port of its own instead of the sampler and --midi-out: CHANNEL:DESTINATION, e.g. 10:'Drum Machine' (repeatable).",
            valueName: "channel:destination"),
        transform: PlayCommand.parseRoute)
    var routes: [ChannelRoute] = []

    @Flag(
        name: .customLong("midi-out-only"),
        help:
            "Send the songs to the MIDI destinations only (--midi-out, --route, --rtpmidi-connect, --rtpmidi): the sampler stays silent and no ALSA device is opened (the system clock keeps the songs' time; --device is not used)."
    )
    var midiOutOnly = false

    /// One `--route`.
    struct ChannelRoute {
        var channel: Int
        var destination: String
    }

    static func parseRoute(_ text: String) throws -> ChannelRoute {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let channel = Int(parts[0]), (1...16).contains(channel), !parts[1].isEmpty else {
            throw ValidationError("--route must be CHANNEL:DESTINATION with a channel of 1-16, got '\(text)'")
        }
        return ChannelRoute(channel: channel, destination: parts[1])
    }

    /// The sequencer destinations asked for, if any.
    var sequencerMIDI: PlaybackSession.SequencerMIDI? {
        guard !midiOut.isEmpty || !routes.isEmpty else { return nil }
        return PlaybackSession.SequencerMIDI(
            destinations: midiOut, routes: routes.map { ($0.channel, $0.destination) })
    }

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    /// What ends a song's playing.
    private enum Next { case next, previous, quit }

    func validate() throws {
        if let error = Mistakes.soundFontAmongSongs(files, command: "play") { throw error }
        _ = try driverOptions.channelRouting(channelMap)
        try engineOptions.check(synth: synth, soundFonts: soundFonts)
        if engineOptions.engine == .native && !channelMap.routes.isEmpty {
            throw ValidationError("--channel-map needs FluidSynth's engine: not with --engine native")
        }
        if midiOutOnly && network.configuration == nil && sequencerMIDI == nil {
            throw ValidationError(
                "--midi-out-only sends to MIDI destinations: add --midi-out DESTINATION, --route CHANNEL:DESTINATION, --rtpmidi-connect HOST:PORT or --rtpmidi PORT"
            )
        }
        let channels = routes.map(\.channel)
        if let twice = channels.first(where: { channel in channels.filter { $0 == channel }.count > 1 }) {
            throw ValidationError("--route: channel \(twice) is routed twice")
        }
        guard let transport else { return }
        guard driverOptions.driver != .alsa else {
            throw ValidationError("--transport follows a JACK server's transport: add --driver jack")
        }
        guard files.count == 1 else {
            throw ValidationError(
                "--transport plays one file (the transport's timeline is the song's), got \(files.count)")
        }
        guard !loop, song.speed == 1 else {
            throw ValidationError("--transport: the song goes at the transport's pace; leave out --loop and --speed")
        }
        if transport == .follow && song.start != nil {
            throw ValidationError(
                "--transport follow: the transport says where the song is; locate it, or use --transport master --start"
            )
        }
    }

    /// Sets up the session (`sessionConfiguration`), says what it plays on, connects its MIDI
    /// outputs, then plays the files one after another (`playFiles`).
    func run() throws {
        Terminal.trapInterrupts()
        inputLimit.apply()
        let fonts = try soundFonts.resolve()
        let configuration = try sessionConfiguration(fonts: fonts)
        let session: PlaybackSession
        do { session = try PlaybackSession(configuration) } catch {
            guard case .device = error else { throw error }
            throw CLIError("\(error); \(Hints.devices), or `pianola render` writes a file instead")
        }
        if !quiet { describe(session, fonts: fonts) }
        try connectMIDIOutputs(session, networkSettings: configuration.network)
        let keys = Terminal.isInteractive && isatty(0) == 1 ? KeyReader() : nil
        defer { keys?.restore() }
        let failures = try playFiles(in: session, keys: keys)
        session.finish()
        if let failure = finishRecording(session) { throw CLIError(failure) }
        if failures > 0 { throw ExitCode(1) }
    }

    /// The playback session the options ask for.
    private func sessionConfiguration(fonts: [SoundFontDiscovery.Resolution]) throws -> PlaybackSession.Configuration {
        var configuration = PlaybackSession.Configuration(
            soundFonts: fonts.map(\.path), device: deviceOptions.configuration(defaultPeriod: 256))
        configuration.sampler = synth.settings
        configuration.engine = engineOptions.engine
        configuration.sampler.sampleLoading = try soundFonts.songLoading()
        configuration.gainDecibels = synth.gain
        configuration.effects = try effectOptions.specs()
        configuration.speed = song.speed
        configuration.transpose = song.transpose
        configuration.loops = loop
        configuration.recordsAudio = audioRecording.recording
        configuration.channelRouting = try driverOptions.channelRouting(channelMap)
        configuration.jack = try driverOptions.jackClient()
        configuration.network = network.configuration
        configuration.sequencer = sequencerMIDI
        configuration.soundsSampler = !midiOutOnly
        if let transport {
            guard configuration.jack != nil else {
                throw CLIError(
                    "--transport: no JACK server runs (start one: jackd -d alsa, or run Pianola under pw-jack)")
            }
            configuration.jack?.transport = transport.mode
        }
        return configuration
    }

    /// Says what the session plays: the SoundFonts, the device, the JACK transport's part.
    private func describe(_ session: PlaybackSession, fonts: [SoundFontDiscovery.Resolution]) {
        SoundFontOptions.describe(fonts)
        deviceOptions.describe(session.output)
        if let transport {
            Terminal.writeError(
                transport == .follow
                    ? "JACK transport: following (space starts and stops it, ←/→ locate it, q quits)\n"
                    : "JACK transport: timebase master (the song's bars and tempo), started from \(Terminal.clock(song.start ?? 0))\n"
            )
        }
    }

    /// Opens the network sessions and starts the sequencer output, when configured, saying
    /// which sessions are open and where the sequencer's songs go.
    private func connectMIDIOutputs(_ session: PlaybackSession, networkSettings: LiveSession.NetworkMIDI?) throws {
        if let settings = networkSettings {
            let silent = try session.connectNetwork()
            if !quiet {
                let open = session.networkSessions.filter(\.isConnected).map {
                    "\(PrintableText.escaped($0.name)) (\($0.address))"
                }
                Terminal.writeError(
                    "network MIDI out: \(open.isEmpty ? "no session yet" : open.joined(separator: ", "))"
                        + " (recovery journal on)\n")
                if let listen = settings.listen {
                    Terminal.writeError(
                        "network MIDI out: taking sessions on \(network.listening(host: listen.host, port: listen.port))\n"
                    )
                }
                for peer in silent { Terminal.writeError("note: no answer from \(peer) yet; still inviting\n") }
                if let note = session.advertisementNote { Terminal.writeError("note: network MIDI: \(note)\n") }
            }
        }
        if let output = session.sequencerOutput {
            try session.startSequencerOutput()
            if !quiet { Terminal.writeError(Self.describe(output, routes: routes)) }
        }
    }

    /// Plays `files` in order, the keys moving between them; a file that cannot be read is said
    /// and skipped. Returns how many were skipped. Finishes the session when playing fails.
    private func playFiles(in session: PlaybackSession, keys: KeyReader?) throws -> Int {
        var index = 0
        var failures = 0
        var startAt = song.start
        var endAt = song.endSeconds
        while index < files.count {
            let sequence: MusicSequence
            do { sequence = try MusicSequence(path: files[index], isCancelled: Terminal.isInterrupted) } catch {
                if case .interrupted = error { throw Terminal.interruptExitCode }
                printError("pianola: \(files[index]): \(error.description)")
                failures += 1
                index += 1
                continue
            }
            let wasRunning = session.output.isRunning
            let warned = session.samplers.map(\.sampleWarnings.count)
            // --start and --end (or --duration) apply to the first song, as it is started.
            try session.play(endAt.map { sequence.ending(atSeconds: $0) } ?? sequence, from: startAt)
            startAt = nil
            endAt = nil
            // Presets of this song whose samples could not be read or decoded: they play silent.
            for (sampler, count) in zip(session.samplers, warned) {
                for warning in sampler.sampleWarnings.dropFirst(count) { Terminal.writeError("warning: \(warning)\n") }
            }
            if !wasRunning && session.output.isPaced && !session.output.isRealTimeScheduled && !quiet {
                Terminal.writeError(
                    "note: real-time scheduling (SCHED_FIFO) is not permitted here; the audio thread runs at normal priority\n"
                )
            }
            let next: Next
            do { next = try playing(fileName(files[index]), in: session, keys: keys) } catch {
                session.finish()
                // The error that stopped playing comes first; a recording's failure is said too.
                if let failure = finishRecording(session) { printError("pianola: \(failure)") }
                throw error
            }
            session.endSong()
            switch next {
            case .next: index += 1
            case .previous: index = max(0, index - 1)
            case .quit: index = files.count
            }
        }
        return failures
    }

    /// Reports the --record-audio file (complete once the session finished); its failure, if any.
    private func finishRecording(_ session: PlaybackSession) -> String? {
        AudioRecordingOptions.report(session.audioTap, quiet: quiet)
    }

    /// Follows a song until it ends or a key moves on: keys to the transport, the status line
    /// (or, on a terminal that gives no keys, a line every tenth; nothing into a pipe or a file).
    private func playing(_ name: String, in session: PlaybackSession, keys: KeyReader?) throws -> Next {
        var lastDecile = -1
        // At least one pass: a song that ends before the first look (an unpaced device plays a
        // short one in a blink) still shows its status.
        repeat {
            if Terminal.interruptSignal != nil { throw Terminal.interruptExitCode }
            if let failure = session.output.streamFailure { throw CLIError("\(failure)") }
            switch keys?.read() {
            case .space: session.togglePause()
            case .left: session.seek(by: -5)
            case .right: session.seek(by: 5)
            case .up: session.faster()
            case .down: session.slower()
            case .loop: session.toggleLoop()
            case .clear: break
            // (Following the JACK transport, the session plays its one song.)
            case .next: if transport == nil { return .next }
            case .previous: if transport == nil { return .previous }
            case .quit: return .quit
            case nil: break
            }
            for event in session.takeMIDIOutEvents() where !quiet {
                // A destination gone (or back) is a note; playback goes on through the rest.
                Terminal.writeError((keys != nil ? "\r\u{1B}[K" : "") + "note: MIDI out: \(event)\n")
            }
            if !quiet {
                let status = session.status()
                if keys != nil {
                    Terminal.writeError("\r" + Self.statusLine(status, name: name) + "\u{1B}[K")
                } else if Terminal.isInteractive,
                    Int(status.positionSeconds / max(status.durationSeconds, 0.001) * 10) > lastDecile
                {
                    // (A terminal without keys: a line every tenth. A pipe or a file gets none.)
                    lastDecile = Int(status.positionSeconds / max(status.durationSeconds, 0.001) * 10)
                    Terminal.writeError(
                        "\(name): \(Terminal.clock(status.positionSeconds)) of "
                            + "\(Terminal.clock(status.durationSeconds)), \(counted(status.underruns, "underrun"))\n")
                }
            }
            usleep(50_000)
        } while !session.isSongFinished
        if !quiet {
            Terminal.writeError(
                keys != nil ? "\r\u{1B}[K" : "\(name): finished, \(counted(session.output.xrunCount, "underrun"))\n")
        }
        return .next
    }

    /// "MIDI out: Pianola (128:0) → NAME (C:P), …; channel 10 → NAME (C:P)".
    static func describe(_ output: ALSASequencerOutput, routes: [ChannelRoute]) -> String {
        let destinations = output.destinations
        let everyChannel = destinations.filter(\.isSubscribed).map(\.name)
        var parts = everyChannel.isEmpty ? [] : [everyChannel.joined(separator: ", ")]
        for route in routes {
            if let destination = destinations.first(where: { $0.requested == route.destination }) {
                parts.append("channel \(route.channel) → \(destination.name)")
            }
        }
        return "MIDI out: port \(output.address) → \(parts.joined(separator: "; "))\n"
    }

    /// One terminal line: state, name, position, bar:beat, tempo, voices, level, underruns,
    /// then as much of the lyric line as fits (its end: the syllables just sung).
    static func statusLine(_ status: PlaybackStatus, name: String) -> String {
        let state = status.isPlaying ? "▶" : "⏸"
        let time = "\(Terminal.clock(status.positionSeconds))/\(Terminal.clock(status.durationSeconds))"
        let line =
            "\(state) \(name) \(time)  \(status.bar):\(status.beat)  \(Int(status.beatsPerMinute.rounded())) BPM  "
            + "\(counted(status.voiceCount, "voice"))  \(String(decibels: status.peak)) dB  "
            + counted(status.underruns, "xrun")
            + (status.transport.map { "  JACK \($0.rawValue)" } ?? "")
        let room = Terminal.width - 1 - line.count - 2
        guard room > 3, !status.lyricLine.isEmpty else { return Terminal.fit(line) }
        let lyric = status.lyricLine.count <= room ? status.lyricLine : "…" + status.lyricLine.suffix(room - 1)
        return line + "  " + lyric
    }
}
