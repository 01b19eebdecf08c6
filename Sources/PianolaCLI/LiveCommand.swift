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

            On a terminal: one status line (sources and their activity, voices, level, latency, \
            underruns) and `q` to quit. Ctrl-C or SIGTERM stop cleanly too; --record is saved then.

            Examples:
              pianola live --autoconnect
              pianola live --connect 'USB Keyboard' --period 64 --periods 3
              pianola live --connect 20:0 --program 1:4 --record take1.mid
              pianola live --rtpmidi 5004                    # a Mac or an iPad joins
              pianola live --rtpmidi-connect mac.local:5004  # or join its session
            """)

    @OptionGroup var deviceOptions: DeviceOptions

    @Option(
        name: .customLong("connect"),
        help: ArgumentHelp(
            "A source to connect: CLIENT:PORT or a client name (repeatable); connected again when it comes back.",
            valueName: "source"))
    var connections: [String] = []

    @Flag(help: "Connect every MIDI source, including those plugged in later.")
    var autoconnect = false

    @Option(
        help: ArgumentHelp(
            "Accept network MIDI sessions (RTP-MIDI, as macOS and iOS offer) on this UDP port and the next: [ADDRESS:]PORT, e.g. 5004 or 127.0.0.1:5004.",
            valueName: "[addr:]port"))
    var rtpmidi: String?

    @Flag(
        name: .customLong("mdns"), inversion: .prefixedNo,
        help: "Advertise the --rtpmidi session over mDNS (avahi), so Macs and iPads list it by name.")
    var advertise = true

    @Option(
        name: .customLong("rtpmidi-connect"),
        help: ArgumentHelp(
            "Open a network MIDI session to a peer (a Mac's network session, rtpmidid, another pianola): HOST:PORT of its control port (repeatable).",
            valueName: "host:port"))
    var rtpmidiConnect: [String] = []

    @Option(
        name: .customLong("rtpmidi-allow"),
        help: ArgumentHelp(
            "Accept network sessions only from this session name or IP address (repeatable; default: anyone).",
            valueName: "name|addr"))
    var rtpmidiAllow: [String] = []

    @Option(
        name: .customLong("rtpmidi-timeout"),
        help: ArgumentHelp(
            "End a network session after this many seconds without clock sync or data (its notes released).",
            valueName: "seconds"))
    var rtpmidiTimeout = 60.0

    @Option(
        name: .customLong("program"),
        help: ArgumentHelp(
            "Start a channel (1…16) on a General MIDI program (0…127), e.g. 1:4 (repeatable).",
            valueName: "ch:prog"))
    var programs: [String] = []

    @Option(help: ArgumentHelp("Write what is played to this MIDI file (tempo 120) on exit.", valueName: "file.mid"))
    var record: String?

    @Option(help: ArgumentHelp("Fixed delay from arrival to sound, in ms, on top of the buffer.", valueName: "ms"))
    var delay = 1.0

    @Option(
        help: ArgumentHelp(
            "On exit, write each note's latency (arrival to the output playing it, by the device's own account) as JSON: percentiles and a histogram.",
            valueName: "file.json"))
    var latencyReport: String?

    @OptionGroup var effectOptions: EffectOptions

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (0...100).contains(delay) else { throw ValidationError("--delay must be between 0 and 100 ms") }
        if let rtpmidi, Self.parseListenAddress(rtpmidi) == nil {
            throw ValidationError("--rtpmidi must be PORT or ADDRESS:PORT with a port of 1…65534, got '\(rtpmidi)'")
        }
        if !rtpmidiAllow.isEmpty && rtpmidi == nil { throw ValidationError("--rtpmidi-allow needs --rtpmidi") }
        for peer in rtpmidiConnect where Self.parsePeerAddress(peer) == nil {
            throw ValidationError("--rtpmidi-connect must be HOST:PORT with a port of 1…65534, got '\(peer)'")
        }
        guard (1...3_600).contains(rtpmidiTimeout) else {
            throw ValidationError("--rtpmidi-timeout must be between 1 and 3600 seconds")
        }
        for program in programs where Self.parseProgram(program) == nil {
            throw ValidationError(
                "--program must be CHANNEL:PROGRAM with channel 1…16 and program 0…127, got '\(program)'")
        }
    }

    /// [HOST:]PORT (HOST defaulting to every address) for listening.
    static func parseListenAddress(_ text: String) -> (host: String, port: Int)? {
        guard let (host, port) = parseAddress(text) else { return nil }
        return (host ?? "0.0.0.0", port)
    }

    /// HOST:PORT of a peer (an IPv6 address in brackets is read, then refused when resolved).
    static func parsePeerAddress(_ text: String) -> (host: String, port: Int)? {
        guard let (host, port) = parseAddress(text), var host else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// [HOST:]PORT with a port of 1…65534 (the data port is the next one); HOST may not be empty.
    static func parseAddress(_ text: String) -> (host: String?, port: Int)? {
        let colon = text.lastIndex(of: ":")
        let portText = colon.map { text[text.index(after: $0)...] } ?? text[...]
        let host = colon.map { String(text[..<$0]) }
        guard let port = Int(portText), (1...65_534).contains(port), host?.isEmpty != true else { return nil }
        return (host, port)
    }

    static func parseProgram(_ text: String) -> (channel: UInt8, program: UInt8)? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let channel = Int(parts[0]), let program = Int(parts[1]), (1...16).contains(channel),
            (0...127).contains(program)
        else { return nil }
        return (UInt8(channel - 1), UInt8(program))
    }

    func run() throws {
        Terminal.trapInterrupts()
        // Input first: without a sequencer there is nothing to play.
        // Without a sequencer, network MIDI alone will do (when asked for).
        var sequencerNote: String?
        let input: ALSASequencerInput?
        do { input = try ALSASequencerInput() } catch {
            guard rtpmidi != nil || !rtpmidiConnect.isEmpty, connections.isEmpty, !autoconnect else {
                throw CLIError(error.description)
            }
            sequencerNote = "note: \(error.description); network MIDI only"
            input = nil
        }
        input?.autoconnect = autoconnect
        for source in connections {
            do { try input?.connect(source) } catch { throw CLIError(error.description) }
        }
        let timeout = Duration.milliseconds(Int64((rtpmidiTimeout * 1000).rounded()))
        let peers = rtpmidiConnect.compactMap(Self.parsePeerAddress)
        for peer in peers {
            do { try RTPMIDIListener.checkPeer(host: peer.host, port: peer.port) } catch {
                throw CLIError(error.description)
            }
        }
        let network: RTPMIDIListener?
        if let (host, port) = rtpmidi.flatMap(Self.parseListenAddress) {
            network = RTPMIDIListener(
                host: host, port: port, name: "Pianola", allow: rtpmidiAllow, sessionTimeout: timeout)
        } else if !peers.isEmpty {
            // Only the sessions asked for: any free pair of ports (on loopback if every peer is
            // there), and invitations from nobody else.
            let local = peers.allSatisfy { ["127.0.0.1", "localhost"].contains($0.host) }
            network = RTPMIDIListener(
                host: local ? "127.0.0.1" : "0.0.0.0", port: 0, name: "Pianola", allow: peers.map(\.host),
                sessionTimeout: timeout)
        } else {
            network = nil
        }

        let (sampler, font) = try deviceOptions.loadSampler()
        for text in programs {
            if let (channel, program) = Self.parseProgram(text) {
                sampler.sendProgramChange(program, onChannel: channel)
            }
        }
        let engine = AudioEngine()
        engine.attach(sampler)
        try effectOptions.connect(sampler, in: engine)
        let meter = LevelMeter()
        try engine.installTap(on: engine.mainMixerNode, meter)
        let scheduler = LiveMIDIScheduler(
            queues: [input?.queue, network?.queue].compactMap { $0 }, destination: sampler,
            delay: .microseconds(Int64((delay * 1000).rounded())))
        try engine.addRenderObserver(scheduler)
        let output = try deviceOptions.connectOutput(engine, defaultPeriod: 128)

        scheduler.presentationClock = output
        let recorder = record.map { _ in MIDIRecorder() }
        if let recorder {
            input?.messageHandler = { message, arrival in recorder.record(message, at: arrival) }
            network?.messageHandler = { message, arrival in recorder.record(message, at: arrival) }
        }
        let latency = output.bufferLatency * 1000 + delay
        if !quiet {
            Terminal.writeError("SoundFont: \(font.path) (\(font.source.explanation))\n")
            Terminal.writeError(
                "Device: \(deviceOptions.device), \(output.sampleFormat.rawValue), \(output.periodFrames) × \(output.periodCount) frames; latency \(String(format1: latency)) ms (buffer \(String(format1: output.bufferLatency * 1000)) + delay \(String(format1: delay)))\n"
            )
            if let sequencerNote { Terminal.writeError(sequencerNote + "\n") }
        }
        try engine.start()
        if !output.isRealTimeScheduled && !quiet {
            Terminal.writeError(
                "note: real-time scheduling (SCHED_FIFO) is not permitted here; the audio thread runs at normal priority\n"
            )
        }
        input?.start()
        do {
            try network?.start()
            for peer in peers { try network?.invite(host: peer.host, port: peer.port) }
        } catch {
            network?.stop()
            engine.stop()
            throw CLIError(error.description)
        }
        // The listener, by name on the network (a note if avahi is not there: not an error).
        var advertisement: RTPMIDIAdvertisement?
        var advertisementNote: String?
        if let network, rtpmidi != nil, advertise {
            if network.host.hasPrefix("127.") {
                advertisementNote = "note: network MIDI: not advertised over mDNS: the session listens on loopback only"
            } else {
                let candidate = RTPMIDIAdvertisement(name: network.name, port: network.port)
                do {
                    try candidate.start()
                    advertisement = candidate
                } catch {
                    advertisementNote = "note: \(error.description)"
                }
            }
        }
        // Ready: the ports exist and audio runs.
        if !quiet {
            if let input { Terminal.writeError("MIDI input: ALSA sequencer port \(input.address) (Pianola:Input)\n") }
            if let network, rtpmidi != nil {
                Terminal.writeError(
                    "MIDI input: network sessions on \(network.host):\(network.port) and \(network.port + 1) as 'Pianola'\n"
                )
            }
            if let name = advertisement?.registeredName {
                Terminal.writeError("MIDI input: advertised over mDNS as '\(name)' (_apple-midi._udp)\n")
            }
            if let advertisementNote { Terminal.writeError(advertisementNote + "\n") }
            for peer in peers {
                Terminal.writeError(
                    "MIDI input: inviting \(peer.host):\(peer.port) to a network session as 'Pianola' (from port \(network?.port ?? 0))\n"
                )
            }
        }

        let keys = Terminal.isInteractive && isatty(0) == 1 ? KeyReader() : nil
        var reported: [String: Bool] = [:]
        var failure: String?
        var lastSummary = Terminal.monotonicSeconds()
        while true {
            if Terminal.interruptSignal != nil { break }
            if let key = keys?.read(), key == .quit { break }
            if let error = output.failure {
                failure = error.description
                break
            }
            if let error = input?.failure {
                failure = error
                break
            }
            let sources = (input?.sources ?? []) + (network?.sessions.map(Self.source) ?? [])
            let networkEvents = network?.takeEvents() ?? []
            if !quiet {
                if keys != nil {
                    // Session events above the status line (which is drawn again below them).
                    for event in networkEvents { Terminal.writeError("\r\u{1B}[Knetwork MIDI: \(event)\n") }
                    Terminal.writeError(
                        "\r"
                            + statusLine(
                                sources: sources, sampler: sampler, meter: meter, latency: latency, output: output)
                            + "\u{1B}[K")
                } else {
                    // Without a terminal: a line when a source comes or goes, and a summary every 10 s.
                    for event in networkEvents { Terminal.writeError("network MIDI: \(event)\n") }
                    for source in input?.sources ?? [] where reported[source.address] != source.isConnected {
                        reported[source.address] = source.isConnected
                        Terminal.writeError(
                            "\(source.isConnected ? "connected" : "disconnected"): \(source.name)\n")
                    }
                    if Terminal.monotonicSeconds() - lastSummary >= 10 {
                        lastSummary = Terminal.monotonicSeconds()
                        Terminal.writeError(
                            "\(scheduler.deliveredCount) events, \(sampler.activeVoiceCount) voices, \(output.xrunCount) underruns\n"
                        )
                    }
                }
            }
            usleep(50_000)
        }
        keys?.restore()
        if !quiet && keys != nil { Terminal.writeError("\r\u{1B}[K") }
        input?.stop()
        advertisement?.stop()
        network?.stop()
        sampler.allNotesOff()
        usleep(UInt32(output.bufferLatency * 2_000_000 + delay * 1000))
        engine.stop()
        engine.outputDevice = nil

        if let recorder, let record {
            do { try recorder.write(to: record) } catch { throw CLIError(error.description) }
            if !quiet { Terminal.writeError("Recorded \(recorder.count) events to \(record)\n") }
        }
        if let latencyReport {
            let report = Self.latencyReport(
                scheduler.noteLatencies, output: output, delay: delay, underruns: output.xrunCount)
            do { try Self.writeText(report.serialized() + "\n", to: latencyReport) } catch {
                throw CLIError("\(latencyReport): cannot write: \(error)")
            }
        }
        if !quiet {
            for event in network?.takeEvents() ?? [] { Terminal.writeError("network MIDI: \(event)\n") }
            if let network {
                Terminal.writeError(
                    "network MIDI: \(network.sessions.count) sessions, \(network.malformedPacketCount) malformed network packets dropped\n"
                )
            }
            Terminal.writeError(
                "\(scheduler.deliveredCount) events played, \(scheduler.lateCount) late, \(output.xrunCount) underruns\n"
            )
        }
        if let failure { throw CLIError(failure) }
        if Terminal.interruptSignal == SIGINT { throw ExitCode(130) }
    }

    /// The latency report: percentiles, jitter (p99 − p1) and a histogram in 0.1 ms bins.
    static func latencyReport(_ latencies: [Double], output: ALSAOutput, delay: Double, underruns: Int) -> JSONValue {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))]
        }
        var bins: [Int: Int] = [:]
        for latency in sorted { bins[Int((latency * 10).rounded(.down)), default: 0] += 1 }
        let histogram = bins.keys.sorted().map { bin in
            JSONValue.object(["ms": .number(Double(bin) / 10), "count": .number(Double(bins[bin]!))])
        }
        let summary: [String: JSONValue] = [
            "min": .number(sorted.first ?? 0), "p1": .number(percentile(1)), "p50": .number(percentile(50)),
            "p99": .number(percentile(99)), "max": .number(sorted.last ?? 0),
            "mean": .number(sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)),
        ]
        return .object([
            "notes": .number(Double(sorted.count)),
            "sampleRate": .number(Double(output.sampleRate)),
            "periodFrames": .number(Double(output.periodFrames)), "periods": .number(Double(output.periodCount)),
            "bufferMs": .number(output.bufferLatency * 1000), "delayMs": .number(delay),
            "underruns": .number(Double(underruns)),
            "latencyMs": .object(summary), "jitterMs": .number(percentile(99) - percentile(1)),
            "histogram": .array(histogram),
        ])
    }

    /// Writes through a temporary name and a rename.
    static func writeText(_ text: String, to path: String) throws(CLIError) {
        let temporary = path + ".partial"
        guard let file = fopen(temporary, "w") else { throw CLIError(String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        let written = fwrite(bytes, 1, bytes.count, file)
        let closed = fclose(file)
        guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError(reason)
        }
    }

    /// A network session as a source on the status line.
    static func source(_ session: RTPMIDIListener.Session) -> ALSASequencerInput.Source {
        .init(
            name: "\(session.name) (network)", address: session.address, isConnected: session.isConnected,
            messageCount: session.messageCount, lastArrival: session.lastArrival)
    }

    func statusLine(
        sources: [ALSASequencerInput.Source], sampler: SamplerNode, meter: LevelMeter, latency: Double,
        output: ALSAOutput
    ) -> String {
        let now = MIDITimestamp.now()
        let connected = sources.filter(\.isConnected)
        let names = connected.map { source in
            let active = source.lastArrival > 0 && now &- source.lastArrival < 300_000_000
            return (active ? "● " : "○ ") + source.name
        }
        let level = meter.takePeaks().max().map { $0 > 0 ? String(format1: 20 * log10(Double($0))) : "-inf" } ?? "-inf"
        let inputs = names.isEmpty ? "no MIDI source connected" : names.joined(separator: ", ")
        return
            "\(inputs)  \(sampler.activeVoiceCount) voices  \(level) dB  \(String(format1: latency)) ms  \(output.xrunCount) xruns"
    }
}
