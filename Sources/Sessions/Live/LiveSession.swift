import AudioFiles
import AudioGraph
import JACKIO
import MIDICore
import MIDIIO
import Meters
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// Plays live MIDI through a SoundFont with a fixed, small latency: what `pianola live` wires
/// together. MIDI comes from the ALSA sequencer (a client other programs and keyboards connect
/// to, and the sources asked for) and from network MIDI sessions (RTP-MIDI); every message is
/// stamped on arrival and played `delay` later than that plus the output buffer, so each note
/// has the same latency. What is played can be recorded as a MIDI file, and each note's latency
/// reported.
///
/// `init` sets everything up (and fails with one clear error); `start` makes sound and opens
/// the ports; `stop` releases every note, drains the device and closes everything. Without an
/// ALSA sequencer, a session with network MIDI runs on that alone (`notes` says so). The session
/// does not print or poll: the caller reads `status()`, `sources` and `takeEvents()` as often as
/// it likes.
public final class LiveSession {
    /// What the session is made of, as given to `init`.
    public let configuration: Configuration
    /// The synthesizer playing the SoundFonts, at the device's sample rate.
    public let sampler: SamplerNode
    /// Every synthesizer: `sampler`, then one per route of the channel routing.
    public var samplers: [SamplerNode] { synthesis.samplers }
    private let synthesis: RoutedSynthesis
    /// The audio graph (sampler, effects, main mixer), rendered on the device's audio thread.
    public let engine: AudioEngine
    /// The ALSA device or JACK client the engine plays through: its buffer, underruns and
    /// failure. Closed by `stop()`.
    public let output: any SessionOutput
    /// The JACK client, when the session plays through JACK (its MIDI input feeds the synthesizer).
    public var jack: JACKOutput? { output as? JACKOutput }
    /// JACK MIDI events on their way to the recorder (pushed on the process thread).
    private let jackRecording: JACKMIDILog?
    /// The ALSA sequencer input, unless there is no sequencer and network MIDI serves alone.
    public let sequencerInput: ALSASequencerInput?
    /// The network MIDI sessions, when configured.
    public let network: RTPMIDIListener?
    /// Hands the arriving messages to the sampler on the audio thread, `delay` after their arrival; it counts
    /// the events delivered and late, and keeps each note's latency.
    public let scheduler: LiveMIDIScheduler
    /// The main mixer's level, for meters.
    public let meter = PeakMeter()
    /// What was played, when `configuration.recordsMIDI`.
    public let recorder: MIDIRecorder?
    /// The audio file being written, when `configuration.recordsAudio`.
    public let audioTap: AudioFileTap?
    /// Where the scheduler placed each message (arrival, sample time), when recording audio.
    var placements: [(arrival: UInt64, sampleTime: Int64)] = []
    /// The listening session's mDNS advertisement, once started (avahi may be missing).
    public private(set) var advertisement: RTPMIDIAdvertisement?
    /// Things the user should know that are not errors; new ones appear with `start`.
    public private(set) var notes: [Note] = []
    private var isRunning = false

    /// Sets up input, synthesis and output; nothing sounds and no port opens before `start`.
    ///
    /// In stages, each undoing what came before it when it fails: the MIDI input (a JACK client,
    /// or the ALSA sequencer), its sources and the network sessions, the thru port, the sound
    /// (sampler, synthesis, scheduler, output), the recordings.
    public init(_ configuration: Configuration) throws(SessionError) {
        self.configuration = configuration
        try RoutedSynthesis.check(configuration.channelRouting, recording: configuration.recordsAudio)
        engine = AudioEngine()
        let input = try Self.openInput(configuration, engine: engine)
        let jack = input.jack
        sequencerInput = input.sequencer
        if let note = input.note { notes.append(note) }
        network = try Self.connectSources(configuration, sequencerInput: sequencerInput, jack: jack, engine: engine)
        thru = try Self.openThru(configuration, sequencerInput: sequencerInput, jack: jack, engine: engine)
        let sound = try Self.makeSound(
            configuration, engine: engine, jack: jack,
            queues: [sequencerInput?.queue, network?.queue].compactMap { $0 }, meter: meter)
        sampler = sound.sampler
        synthesis = sound.synthesis
        scheduler = sound.scheduler
        output = sound.output
        jackRecording = Self.connectJACKMIDI(jack, to: synthesis.destination, recording: configuration.recordsMIDI)
        scheduler.presentationClock = output as? any AudioPresentationClock
        audioTap = try Self.recordAudio(
            configuration.recordsAudio, engine: engine, output: output, scheduler: scheduler)
        recorder = configuration.recordsMIDI ? MIDIRecorder() : nil
        installMessageHandler()
    }

    /// The MIDI input: with JACK, the client (its rate is the server's, MIDI comes from its
    /// port; named sources must exist now); else the ALSA sequencer, or, where there is none, a
    /// note that network MIDI serves alone (when it is asked for and no source is).
    private static func openInput(
        _ configuration: Configuration, engine: AudioEngine
    ) throws(SessionError) -> (jack: JACKOutput?, sequencer: ALSASequencerInput?, note: Note?) {
        if var client = configuration.jack {
            client.channelCount = configuration.channelRouting?.channelCount ?? 2
            client.hasMIDIInput = true
            var jack: JACKOutput?
            do {
                jack = try engine.connectOutput(toJACK: client)
                // Named sources must exist now (they are connected when the session starts).
                for source in configuration.sources { _ = try jack?.midiSourcePorts(named: source) }
            } catch {
                engine.releaseOutput(jack)
                throw .jack(error)
            }
            return (jack, nil, nil)
        }
        do {
            let sequencer = try ALSASequencerInput(clientName: configuration.clientName)
            sequencer.autoconnect = configuration.autoconnect
            return (nil, sequencer, nil)
        } catch {
            // Without a sequencer, network MIDI alone will do (when asked for).
            guard configuration.network != nil, configuration.sources.isEmpty, !configuration.autoconnect else {
                throw .midi(error)
            }
            return (nil, nil, .networkOnly(reason: error.description))
        }
    }

    /// Connects the sequencer to the sources asked for (a JACK client connects its own when the
    /// session starts), checks the network peers and makes the network listener, if any.
    private static func connectSources(
        _ configuration: Configuration, sequencerInput: ALSASequencerInput?, jack: JACKOutput?, engine: AudioEngine
    ) throws(SessionError) -> RTPMIDIListener? {
        do {
            if jack == nil { for source in configuration.sources { try sequencerInput?.connect(source) } }
            let network = configuration.network
            for peer in network?.peers ?? [] { try RTPMIDIListener.checkPeer(host: peer.host, port: peer.port) }
            return try network.map(Self.listener)
        } catch {
            engine.releaseOutput(jack)
            throw .midi(error)
        }
    }

    /// The thru port, when `configuration.thru` names destinations: a sequencer client that
    /// forwards the ALSA and network input (not with JACK), never autoconnected back into it.
    private static func openThru(
        _ configuration: Configuration, sequencerInput: ALSASequencerInput?, jack: JACKOutput?, engine: AudioEngine
    ) throws(SessionError) -> ALSASequencerOutput? {
        guard !configuration.thru.isEmpty else { return nil }
        guard jack == nil else {
            engine.releaseOutput(jack)
            throw .failed("MIDI thru forwards ALSA sequencer and network MIDI: not with JACK (route it there)")
        }
        do {
            let output = try ALSASequencerOutput(clientName: "\(configuration.clientName) thru", portName: "thru")
            for destination in configuration.thru { try output.connect(destination) }
            // What goes out of the thru port must not come back in (autoconnect would take it).
            sequencerInput?.neverAutoconnect(client: output.client)
            return output
        } catch {
            throw .midi(error)
        }
    }

    /// The sound: the sampler at the output's rate, the synthesis after it (routing, effects,
    /// gain), the scheduler that hands it the input's `queues` on the audio thread, the meter on
    /// the main mixer, and the output (JACK, or the ALSA device kept to the clock).
    private static func makeSound(
        _ configuration: Configuration, engine: AudioEngine, jack: JACKOutput?, queues: [MIDIEventQueue],
        meter: PeakMeter
    ) throws(SessionError) -> (
        sampler: SamplerNode, synthesis: RoutedSynthesis, scheduler: LiveMIDIScheduler, output: any SessionOutput
    ) {
        do throws(SessionError) {
            let sampler = try engine.attachedSampler(
                soundFonts: configuration.soundFonts, settings: configuration.sampler,
                sampleRate: jack?.sampleRate ?? configuration.device.sampleRate)
            guard configuration.engine == .fluidSynth || configuration.sampler.mutedChannels.isEmpty else {
                throw SessionError.failed("muted channels need FluidSynth's engine live, not the native one")
            }
            let native = try NativeSynthesis.node(
                configuration.engine, soundFonts: configuration.soundFonts, settings: configuration.sampler,
                sampleRate: sampler.settings.sampleRate)
            let synthesis = try RoutedSynthesis(
                engine: engine, sampler: sampler, routing: configuration.channelRouting, effects: configuration.effects,
                volume: Float(pow(10, configuration.gainDecibels / 20)), native: native)
            let scheduler = LiveMIDIScheduler(
                queues: queues, destination: synthesis.destination, delay: configuration.delay)
            do {
                try engine.installTap(on: engine.mainMixerNode, meter)
                try engine.addRenderObserver(scheduler)
                // Live input comes in real time: ALSA's null device is kept to the clock too.
                var device = configuration.device
                device.pacesUnpacedDevice = true
                let output = try engine.sessionOutput(jack: jack, device: device, routing: configuration.channelRouting)
                return (sampler, synthesis, scheduler, output)
            } catch { throw SessionError(error) }
        } catch {
            engine.releaseOutput(jack)
            throw error
        }
    }

    /// With JACK: MIDI from its port plays `destination`, and, when `recording`, is logged for
    /// the recorder (pushed on the process thread). The log, if any.
    private static func connectJACKMIDI(
        _ jack: JACKOutput?, to destination: any MIDIReceivingNode, recording: Bool
    ) -> JACKMIDILog? {
        jack?.midiDestination = destination
        guard let jack, recording else { return nil }
        let log = JACKMIDILog(clock: jack.clockLine)
        jack.midiObserver = { bytes, sampleTime, _ in log.push(bytes, sampleTime: sampleTime) }
        return log
    }

    /// The audio file, when recording audio; created last, so that a session that cannot be
    /// set up leaves no file. The scheduler then logs where it placed each message.
    private static func recordAudio(
        _ recording: OutputRecording?, engine: AudioEngine, output: any SessionOutput, scheduler: LiveMIDIScheduler
    ) throws(SessionError) -> AudioFileTap? {
        guard let recording else { return nil }
        let tap: AudioFileTap
        do { tap = try engine.recordOutput(recording, sampleRate: output.sampleRate) } catch {
            // The device is open and the engine and it hold each other: let go before failing.
            output.close()
            engine.outputDevice = nil
            scheduler.presentationClock = nil
            throw error
        }
        scheduler.logsPlacements = true
        return tap
    }

    /// Hands every message from the sequencer and the network to the MIDI recorder and the thru
    /// port, when there is either.
    private func installMessageHandler() {
        guard recorder != nil || thru != nil else { return }
        let recorder = recorder
        let thru = thru
        let handler: @Sendable (MIDIMessage, UInt64) -> Void = { message, arrival in
            recorder?.record(message, at: arrival)
            // Thru: at once, as it came (the kernel delivers it now).
            if let thru {
                thru.send(message, at: 0)
                thru.flush()
            }
        }
        sequencerInput?.messageHandler = handler
        network?.messageHandler = handler
    }

    /// The client forwarding what comes in to the thru destinations (`Configuration.thru`).
    public let thru: ALSASequencerOutput?

    /// The listener a network configuration asks for: on its address, or (only opening sessions)
    /// on any free pair of ports, on loopback if every peer is there, taking invitations from
    /// those peers' addresses only (a peer named by host name resolved; one that does not
    /// resolve throws).
    static func listener(_ network: NetworkMIDI) throws(MIDIIOError) -> RTPMIDIListener {
        if let listen = network.listen {
            return RTPMIDIListener(
                host: listen.host, port: listen.port, name: network.name, allow: network.allow,
                sessionTimeout: network.sessionTimeout)
        }
        let local = network.peers.allSatisfy { ["127.0.0.1", "localhost"].contains($0.host) }
        return RTPMIDIListener(
            host: local ? "127.0.0.1" : "0.0.0.0", port: 0, name: network.name,
            allow: try network.peers.map { peer throws(MIDIIOError) in try RTPMIDIAddressRange(resolving: peer.host) },
            sessionTimeout: network.sessionTimeout)
    }

    /// The latency from a message's arrival to its sound: the output buffer plus the delay, in
    /// milliseconds (through JACK: one period, JACK MIDI taking no delay).
    public var latencyMilliseconds: Double {
        output.bufferLatency * 1000 + (jack == nil ? delayMilliseconds : 0)
    }

    var delayMilliseconds: Double {
        let parts = configuration.delay.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }

    /// Starts the sound, then the inputs: the sequencer port's subscriptions, the network ports
    /// and invitations, and the mDNS advertisement.
    public func start() throws(SessionError) {
        do { try engine.start() } catch { throw SessionError(error) }
        isRunning = true
        if !output.isRealTimeScheduled {
            notes.append(.realTimeRefused)
        }
        sequencerInput?.start()
        if let jack {
            if let recorder { jackRecording?.start(into: recorder) }
            do {
                for source in configuration.sources { try jack.connectMIDI(from: source) }
            } catch {
                stop()
                throw .jack(error)
            }
            if configuration.autoconnect { jack.connectPhysicalMIDISources() }
        }
        guard let network else { return }
        do {
            try network.start()
            for peer in configuration.network?.peers ?? [] { try network.invite(host: peer.host, port: peer.port) }
        } catch {
            stop()
            throw .midi(error)
        }
        advertise(network)
    }

    /// Advertises the listening session over mDNS; a note (not an error) when it cannot be.
    private func advertise(_ network: RTPMIDIListener) {
        guard let settings = configuration.network else { return }
        let (started, reason) = settings.advertise(network)
        advertisement = started
        if let reason { notes.append(.notAdvertised(reason: reason)) }
    }

    /// Why the session cannot go on (the device failed or was lost, the sequencer input failed),
    /// or nil while it runs.
    public var failure: String? {
        if let error = output.streamFailure { return "\(error)" }
        return sequencerInput?.failure
    }

    /// The MIDI sources: sequencer ports (connected, or remembered to be connected again) and
    /// network sessions.
    public var sources: [Source] {
        (sequencerInput?.sources.map(Source.init) ?? []) + (jack.map { [Source($0)] } ?? [])
            + (network?.sessions.map(Source.init) ?? [])
    }

    /// What happened since the last call: sequencer sources that connected, disconnected or could
    /// not be connected, network sessions that opened, ended or were refused.
    public func takeEvents() -> [Event] {
        (sequencerInput?.takeEvents().map(Event.sequencer) ?? []) + (network?.takeEvents().map(Event.network) ?? [])
            + (thru?.takeEvents().map(Event.thru) ?? [])
    }

    /// The sound now; `peak` is the highest level since the last call.
    public func status() -> LiveStatus {
        // Drained as it goes: the scheduler's log holds 65 536 messages.
        if audioTap != nil { placements += scheduler.takePlacements() }
        return LiveStatus(
            voiceCount: synthesis.activeVoiceCount, peak: synthesis.takePeak(meter),
            latencyMilliseconds: latencyMilliseconds, underruns: output.xrunCount,
            deliveredCount: scheduler.deliveredCount + (jack?.midiEventCount ?? 0), lateCount: scheduler.lateCount)
    }

    /// Ends every input, releases every note, lets the device play out, stops and closes it (the
    /// device is free for others once this returns). The recording and the latencies stay
    /// readable. Stopping twice is harmless; a session that is released stops itself.
    public func stop() {
        sequencerInput?.stop()
        advertisement?.stop()
        advertisement = nil
        network?.stop()
        // Every thru destination reset (All Notes Off, Reset All Controllers).
        thru?.close()
        if isRunning {
            isRunning = false
            synthesis.allNotesOff()
            usleep(UInt32(output.bufferLatency * 2_000_000 + delayMilliseconds * 1000))
            engine.stop()
        }
        if audioTap != nil { placements += scheduler.takePlacements() }
        jackRecording?.stop(drainingInto: recorder)
        // The audio file is complete (a failure stays readable in `audioTap.failure`).
        _ = try? audioTap?.finish()
        // The engine, the device and the scheduler's clock hold each other: let go.
        output.close()
        scheduler.presentationClock = nil
        engine.outputDevice = nil
    }

    deinit { stop() }

    /// Writes what was played as a MIDI file (tempo 120).
    public func writeRecording(to path: String) throws(SessionError) {
        guard let recorder else { throw .failed("nothing was recorded: the session records no MIDI") }
        do {
            if audioTap != nil {
                let all = placements + (jackRecording?.placements.withLock { $0 } ?? [])
                let map = PlacementMap(
                    all.sorted { $0.arrival < $1.arrival }, sampleRate: output.sampleRate, start: recorder.start)
                try recorder.write(to: path, seconds: map.seconds)
            } else {
                try recorder.write(to: path)
            }
        } catch { throw .midiFile(error) }
    }

    /// Each note's latency so far.
    public func latencyReport() -> LatencyReport {
        LatencyReport(latencies: scheduler.noteLatencies, output: output, delayMilliseconds: delayMilliseconds)
    }
}
