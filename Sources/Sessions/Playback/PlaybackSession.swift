import ALSAIO
import AudioFiles
import AudioGraph
import Effects
import Foundation
import JACKIO
import MIDICore
import MIDIIO
import Meters
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// Plays MIDI files on an ALSA device or a JACK server through a SoundFont, one song after another, with a
/// transport: what `pianola play` wires together. Songs that go to MIDI destinations only need no
/// device: the clock keeps their time. One sampler, effect chain, level meter and
/// device serve every song; each song gets its own `MusicPlayer`.
///
/// It does not poll, print or read keys: the caller drives it (a terminal UI, a test, an app)
/// and reads `status` as often as it likes. The device's audio thread does the rendering.
public final class PlaybackSession {
    /// What a session that follows the JACK transport refuses, for a caller to put in its own
    /// words (the `pianola` command names `--speed` and `--loop`).
    public static let transportPaceHint = "no speed other than 1, no loops and no rate effect in the configuration"

    /// What a playback session is made of.
    public struct Configuration: Sendable {
        /// The SoundFonts (.sf2/.sf3), stacked: a preset of a later font hides an earlier one's.
        public var soundFonts: [String]
        /// The ALSA device, its rate and buffer. Not opened when the sampler is silent
        /// (`soundsSampler` false) and there is no `jack`: the monotonic clock then drives the songs
        /// with this rate and buffer (`ClockOutput`). A device that does not pace the stream (ALSA's
        /// `null`) is kept to the clock when the songs go to `network` or `sequencer`
        /// (`ALSAOutput.Configuration.pacesUnpacedDevice`): their destinations hear them in time.
        public var device: ALSAOutput.Configuration
        /// The synthesizer: polyphony, interpolation, reverb and chorus, program overrides, muted
        /// channels (its sample rate is the device's).
        public var sampler = SamplerNode.Settings()
        /// The synthesizer: FluidSynth (`sampler`, the default) or Pianola's own voice engine
        /// (one SoundFont, every sample read before the first song; `sampler`'s polyphony,
        /// reverb and chorus switches and muted channels apply, its interpolation does not; no
        /// channel routing or program overrides).
        public var engine: SynthesisEngine = .fluidSynth
        /// Output gain in dB, at the main mixer.
        public var gainDecibels = 0.0
        /// Effects on the sampler's output, in order.
        public var effects: [EffectSpec] = []
        /// Tempo factor, 0.25…4.
        public var speed = 1.0
        /// Semitones, drums excluded.
        public var transpose = 0
        /// Whether each song loops.
        public var loops = false
        /// Write the mixed output to an audio file as it plays, from the first song's first frame.
        public var recordsAudio: OutputRecording?
        /// Parts of the song on other output channels than 1–2 (`--channel-map`); the device is
        /// opened with the routing's channel count. Not with `recordsAudio`.
        public var channelRouting: ChannelRouting?
        /// Play through a JACK server as this client instead of the ALSA `device` (the rate is
        /// the server's; the channel count, as for the device, the routing's).
        public var jack: JACKOutput.Configuration?
        /// Network MIDI sessions the songs go to as well (RTP-MIDI, each packet with a recovery
        /// journal): peers to open sessions to, a port others join, or both (advertised over
        /// mDNS as `live` does).
        public var network: LiveSession.NetworkMIDI?
        /// ALSA sequencer destinations the songs go to as well (external synthesizers, other
        /// programs' ports), scheduled on a sequencer queue.
        public var sequencer: SequencerMIDI?
        /// Whether the sampler sounds the songs (false: they go to `network` or `sequencer` only,
        /// and no audio device is opened: see `device`).
        public var soundsSampler = true

        /// A configuration playing `soundFonts` on `device` (by default: `default`, 44100 Hz, 2 periods of 256
        /// frames), everything else at its default.
        public init(soundFonts: [String], device: ALSAOutput.Configuration = ALSAOutput.Configuration()) {
            self.soundFonts = soundFonts
            self.device = device
        }
    }

    /// Where songs go on the ALSA sequencer (`pianola play --midi-out`, `--route`).
    public struct SequencerMIDI: Sendable {
        /// Destinations that get every channel not routed elsewhere (names or `CLIENT:PORT`, as
        /// `aconnect` takes them): subscribed to Pianola's output port, so that they get what every
        /// other subscriber of the port gets.
        public var destinations: [String] = []
        /// Channels (1…16) sent to a destination of their own instead (not to the sampler, not to
        /// `destinations`).
        public var routes: [(channel: Int, destination: String)] = []
        /// The sequencer client's name (its output port is `out`).
        public var clientName = "Pianola"

        /// Sequencer MIDI out to `destinations` (every channel) and `routes` (a channel each).
        public init(destinations: [String] = [], routes: [(channel: Int, destination: String)] = []) {
            self.destinations = destinations
            self.routes = routes
        }
    }

    /// The range of `speed`, and the step of `faster()` and `slower()`.
    public static let speeds = 0.25...4.0
    /// The factor `faster()` multiplies the speed by and `slower()` divides it by.
    public static let speedStep = 1.1

    /// The synthesizer playing the SoundFonts, at the device's sample rate; every song plays through it
    /// (with a channel routing: the mix's part, the other parts in `samplers`).
    public let sampler: SamplerNode
    /// Every synthesizer: `sampler`, then one per route of the channel routing.
    public var samplers: [SamplerNode] { synthesis.samplers }
    /// The audio graph (sampler, effects, main mixer), rendered on the device's audio thread.
    public let engine: AudioEngine
    /// The ALSA device, JACK client or clock (`ClockOutput`, no device: MIDI out only) the engine
    /// plays through: started by the first `play`, closed by `finish()`.
    public let output: any SessionOutput
    /// The main mixer's level, for meters.
    public let meter = PeakMeter()
    /// The audio file being written, when `configuration.recordsAudio`; complete after `finish()`.
    public let audioTap: AudioFileTap?
    /// The song playing (or paused), if any.
    public private(set) var player: MusicPlayer?
    /// The tempo factor every song plays at, within `speeds`: the configuration's, then as `faster()` and
    /// `slower()` change it.
    public private(set) var speed: Double
    /// Whether songs loop: the configuration's, then as `toggleLoop()` changes it.
    public private(set) var loops: Bool
    /// Semitones every song is transposed by (drums excluded), from the configuration.
    public let transpose: Int
    /// The effects after the sampler (a delay given a note value follows each song's tempo).
    private let effectSpecs: [EffectSpec]
    /// How many times as fast the effects play the song (a `varispeed` or `timepitch` in them):
    /// the player runs at `speed` × this, so the song goes at the pace they ask for.
    private let effectRate: Double
    private let synthesis: RoutedSynthesis
    /// The JACK client, when playing through one.
    private let jack: JACKOutput?
    /// What the session does with the JACK transport (`.ignored` without JACK): followed, the
    /// song plays while the shared transport rolls, from its place; as timebase master, also
    /// publishing the song's bars and tempo, and starting and stopping it. One song, at speed 1.
    public let transport: JACKOutput.Transport
    /// Where each song's player plays: the synthesis, the network, or both.
    private let playerDestination: any MIDIReceivingNode
    /// The network MIDI output, when configured: its sessions in `networkSessions`.
    private let networkOutput: NetworkMIDIOutput?
    private let network: LiveSession.NetworkMIDI?
    /// The ALSA sequencer client the songs leave from, when configured.
    public let sequencerOutput: ALSASequencerOutput?
    /// Its destinations' feeds: the subscribers' (every channel not routed), then one per route.
    private let sequencerFeeds: [SequencerMIDIOutput]

    /// Loads the SoundFont and opens the device (nothing plays until `play`).
    ///
    /// In stages, each undoing what came before it when it fails: the JACK client (its rate is
    /// the server's, and the synthesizer follows it), the sound (`makeSound`), the JACK
    /// transport's terms, the MIDI outputs and where the players play (`openMIDIOutputs`), and
    /// last the audio recording.
    public init(_ configuration: Configuration) throws(SessionError) {
        try RoutedSynthesis.check(configuration.channelRouting, recording: configuration.recordsAudio)
        engine = AudioEngine()
        var jack: JACKOutput?
        if var client = configuration.jack {
            client.channelCount = configuration.channelRouting?.channelCount ?? 2
            do { jack = try engine.connectOutput(toJACK: client) } catch { throw .jack(error) }
        }
        let sound = try Self.makeSound(configuration, engine: engine, jack: jack, meter: meter)
        sampler = sound.sampler
        effectSpecs = configuration.effects
        effectRate = sound.effectRate
        synthesis = sound.synthesis
        output = sound.output
        self.jack = jack
        transport = jack?.transport ?? .ignored
        if transport != .ignored {
            guard configuration.speed == 1, effectRate == 1, !configuration.loops else {
                engine.releaseOutput(jack)
                throw .failed(
                    "following the JACK transport, the song plays at the transport's pace: " + Self.transportPaceHint)
            }
        }
        network = configuration.network
        let outputs = try Self.openMIDIOutputs(
            configuration, engine: engine, output: output, sampler: synthesis.destination, jack: jack)
        networkOutput = outputs.network
        sequencerOutput = outputs.sequencer
        sequencerFeeds = outputs.sequencerFeeds
        playerDestination = outputs.playerDestination
        if !configuration.soundsSampler { engine.mainMixerNode.outputVolume = 0 }
        speed = min(max(configuration.speed, Self.speeds.lowerBound), Self.speeds.upperBound)
        loops = configuration.loops
        transpose = configuration.transpose
        audioTap = try Self.recordAudio(configuration.recordsAudio, engine: engine, output: output)
    }

    /// The sound: the sampler at the output's rate (without reverb or chorus when it stays
    /// silent), the effects' rate (`effectRate`), the synthesis after the sampler (routing,
    /// effects, gain), the meter on the main mixer, and the output (JACK, the ALSA device, or the
    /// clock when the sampler is silent).
    private static func makeSound(
        _ configuration: Configuration, engine: AudioEngine, jack: JACKOutput?, meter: PeakMeter
    ) throws(SessionError) -> (
        sampler: SamplerNode, effectRate: Double, synthesis: RoutedSynthesis, output: any SessionOutput
    ) {
        // A sampler that stays silent (MIDI out only) runs no reverb or chorus: it costs nothing
        // then, and the MIDI's timing has the machine to itself.
        var samplerSettings = configuration.sampler
        if !configuration.soundsSampler {
            samplerSettings.isReverbEnabled = false
            samplerSettings.isChorusEnabled = false
        }
        do throws(SessionError) {
            let sampler = try engine.attachedSampler(
                soundFonts: configuration.soundFonts, settings: samplerSettings,
                sampleRate: jack?.sampleRate ?? configuration.device.sampleRate)
            let effectRate = try Self.checkedRate(of: configuration.effects)
            let native = try NativeSynthesis.node(
                configuration.soundsSampler ? configuration.engine : .fluidSynth, soundFonts: configuration.soundFonts,
                settings: samplerSettings,
                sampleRate: sampler.settings.sampleRate)
            let synthesis = try RoutedSynthesis(
                engine: engine, sampler: sampler, routing: configuration.channelRouting, effects: configuration.effects,
                volume: Float(pow(10, configuration.gainDecibels / 20)), native: native)
            do {
                try engine.installTap(on: engine.mainMixerNode, meter)
                // MIDI out is timed by the output's account of when a frame is heard: a device
                // that takes frames as fast as they come would send the songs in one burst.
                var device = configuration.device
                if configuration.network != nil || configuration.sequencer != nil { device.pacesUnpacedDevice = true }
                let output = try engine.sessionOutput(
                    jack: jack, device: device, routing: configuration.channelRouting,
                    withoutDevice: !configuration.soundsSampler)
                return (sampler, effectRate, synthesis, output)
            } catch { throw SessionError(error) }
        } catch {
            engine.releaseOutput(jack)
            throw error
        }
    }

    /// The audio file, when recording; created last, so that a session that cannot be set up
    /// leaves no file.
    private static func recordAudio(
        _ recording: OutputRecording?, engine: AudioEngine, output: any SessionOutput
    ) throws(SessionError) -> AudioFileTap? {
        guard let recording else { return nil }
        do { return try engine.recordOutput(recording, sampleRate: output.sampleRate) } catch {
            // The device is open and the engine and it hold each other: let go before failing.
            output.close()
            engine.outputDevice = nil
            throw error
        }
    }

    /// Plays `sequence` from `start` seconds (or its beginning), in place of the song before;
    /// starts the device on the first song.
    ///
    /// Following the JACK transport, the session plays one song: the transport decides when and
    /// from where (a timebase master starts it from `start` or the song's beginning).
    public func play(_ sequence: MusicSequence, from start: Double? = nil) throws(SessionError) {
        if transport != .ignored && (player != nil || output.isRunning) {
            throw .failed("following the JACK transport, a session plays one song")
        }
        endSong()
        var sequence = sequence
        if synthesis.native != nil && !sampler.settings.mutedChannels.isEmpty {
            // The native engine has no channel mute of its own: the muted channels are left out.
            sequence = sequence.keepingChannels(Set(0..<16).subtracting(sampler.settings.mutedChannels))
        }
        if sampler.settings.sampleLoading == .onDemand && synthesis.native == nil {
            // The song's samples, read (by helper threads) before it starts. What earlier songs
            // loaded stays: freeing it could happen on the audio thread, when their last voices end.
            do {
                try sampler.loadSamples(for: sampler.presetUsage(of: sequence), whileRendering: output.isRunning)
            } catch {
                throw .soundFont(error)
            }
        }
        for nodes in synthesis.effectNodes {
            retimeDelays(nodes, specs: effectSpecs, songTempo: sequence.startingTempo)
        }
        let player = MusicPlayer(sequence: sequence, destination: playerDestination)
        if !sequencerFeeds.isEmpty && !output.isRunning {
            try startSequencerOutput()
            // MIDI out is timed by the device's account of when a frame is heard, which it gives
            // once it plays: the device starts first (silent), and the song when the account is
            // there (a second at most), so that its first messages are on time too.
            do { try output.start() } catch { throw SessionError(error) }
            for _ in 0..<200 where !sequencerFeeds.allSatisfy(\.isClockKnown) { usleep(5_000) }
        }
        do { try engine.addRenderObserver(player) } catch { throw SessionError(error) }
        player.transpose = transpose
        if let jack, transport != .ignored {
            player.followsTransport = true
            jack.transportFollower = player
        } else {
            player.rate = speed * effectRate
            if loops { player.setLoop(0..<sequence.durationSeconds, count: -1) }
            if let start { player.seek(toSeconds: start) }
            player.play()
        }
        self.player = player
        if !output.isRunning {
            do { try output.start() } catch { throw SessionError(error) }
        }
        if let jack, transport == .timebaseMaster {
            jack.locateTransport(toSeconds: start ?? 0)
            jack.startTransport()
        }
    }

    /// Starts the sequencer feeds (`play` does, if not done). The events of the sequencer
    /// destinations (one gone, one back) are in `takeMIDIOutEvents()`.
    ///
    /// - Throws: `SessionError.failed` when the system refuses a feed's thread.
    public func startSequencerOutput() throws(SessionError) {
        for feed in sequencerFeeds { try feed.start() }
    }

    /// What happened to the sequencer destinations since the last call: "disconnected: NAME",
    /// "connected: NAME" (one that came back); playback goes on through the rest.
    public func takeMIDIOutEvents() -> [String] { sequencerOutput?.takeEvents() ?? [] }

    /// Opens the network MIDI sessions (binds the ports, invites the peers) and waits up to
    /// `timeout` for every peer invited to answer, so that the song's first notes reach them;
    /// the peers that did not answer (their sessions go on being tried). Call before the first `play`.
    public func connectNetwork(waitingUpTo timeout: Duration = .seconds(3)) throws(SessionError) -> [String] {
        guard let networkOutput, let network else { return [] }
        do {
            try networkOutput.listener.start()
            for peer in network.peers { try networkOutput.listener.invite(host: peer.host, port: peer.port) }
        } catch {
            throw .midi(error)
        }
        try networkOutput.start()
        let (started, reason) = network.advertise(networkOutput.listener)
        advertisement = started
        advertisementNote = reason.map { "not advertised over mDNS: \($0)" }
        let deadline = ContinuousClock.now + timeout
        while networkSessions.filter(\.isConnected).count < network.peers.count && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        // (A session's address is its peer's, resolved: two peers on one port are told apart.)
        let connected = Set(networkSessions.filter(\.isConnected).map(\.address))
        return network.peers.filter { peer in
            let address = (try? RTPMIDIListener.sessionAddress(host: peer.host, port: peer.port)) ?? peer.description
            return !connected.contains(address)
        }.map(\.description)
    }

    /// The listening session's mDNS advertisement, once started (avahi may be missing).
    public private(set) var advertisement: RTPMIDIAdvertisement?
    /// Why the listening session is not advertised, when it could not be (a note, not an error).
    public private(set) var advertisementNote: String?

    /// The network MIDI sessions (open and ended), when configured.
    public var networkSessions: [RTPMIDIListener.Session] { networkOutput?.listener.sessions ?? [] }

    /// The JACK transport's state, when the session follows it.
    public var transportState: JACKOutput.TransportState? {
        guard let jack, transport != .ignored else { return nil }
        return jack.transportPosition().state
    }

    /// Stops the current song (its notes released) and takes its player out of the render; as the
    /// JACK transport's timebase master, stops the transport too.
    public func endSong() {
        guard let player else { return }
        // The master started the transport: it stops it (a follower leaves it to the others),
        // and waits (half a second at most) for the stop to take, publishing the bars until then.
        if let jack, transport == .timebaseMaster, jack.isOpen {
            jack.stopTransport()
            for _ in 0..<50 where jack.transportPosition().state != .stopped { usleep(10_000) }
        }
        player.pause()
        // The pause releases the song's notes in the player's next render: let it render (two
        // periods) before taking it out, so that every destination (a network peer too, which
        // `finish()`'s all-notes-off of the samplers does not reach) gets the Note Offs.
        if output.isRunning && !player.isFinished { usleep(UInt32(min(0.5, output.bufferLatency * 2) * 1_000_000)) }
        // Only fails for an observer that was never added: nothing to undo then.
        try? engine.removeRenderObserver(player)
        self.player = nil
    }

    /// Whether the current song has played to its end (after any loops).
    /// Following the JACK transport, the song never finishes on its own (the transport can come
    /// back); as its timebase master, it finishes at the song's end.
    public var isSongFinished: Bool {
        if transport == .followed { return false }
        return player?.isFinished ?? true
    }

    /// Pauses a playing song, resumes a paused one (following the JACK transport: stops or
    /// starts the transport, for every client).
    public func togglePause() {
        if let jack, let state = transportState {
            if state == .stopped { jack.startTransport() } else { jack.stopTransport() }
            return
        }
        guard let player else { return }
        if player.isPlaying { player.pause() } else { player.play() }
    }

    /// Moves the song position by `seconds` (back when negative), within the song (following
    /// the JACK transport: moves the transport).
    public func seek(by seconds: Double) {
        guard let player else { return }
        let target = min(max(0, player.currentPositionInSeconds + seconds), player.sequence.durationSeconds)
        if let jack, transport != .ignored {
            jack.locateTransport(toSeconds: target)
        } else {
            player.seek(toSeconds: target)
        }
    }

    /// Plays faster by one step (up to 4×).
    public func faster() { setSpeed(speed * Self.speedStep) }
    /// Plays slower by one step (down to 0.25×).
    public func slower() { setSpeed(speed / Self.speedStep) }

    private func setSpeed(_ value: Double) {
        guard transport == .ignored else { return }  // the transport's pace
        speed = min(max(value, Self.speeds.lowerBound), Self.speeds.upperBound)
        player?.rate = speed * effectRate
    }

    /// The effects' rate factor, refused when with the fastest or slowest `speed` it would leave
    /// the player's range.
    static func checkedRate(of effects: [EffectSpec]) throws(SessionError) -> Double {
        let factor = EffectSpec.rateFactor(of: effects)
        guard (1.0 / 25...25).contains(factor) else {
            throw .failed(
                "the effects' rates multiply to \(EffectSpec.format(factor)): a song plays at 1/25…25 times its pace")
        }
        return factor
    }

    /// Turns looping of the current (and every following) song on or off.
    public func toggleLoop() {
        guard transport == .ignored else { return }  // the transport's place
        loops.toggle()
        guard let player else { return }
        player.setLoop(loops ? 0..<player.sequence.durationSeconds : nil, count: -1)
    }

    /// What is playing now; `peak` is the highest level since the last call.
    public func status() -> PlaybackStatus {
        PlaybackStatus(
            player: player, speed: speed * effectRate, voiceCount: synthesis.activeVoiceCount,
            peak: synthesis.takePeak(meter),
            underruns: output.xrunCount, transport: transportState)
    }

    /// Ends playback: notes released, the device drained, stopped and closed (free for others
    /// once this returns). Finishing twice is harmless; a session that is released finishes itself.
    public func finish() {
        endSong()
        if output.isRunning {
            synthesis.allNotesOff()
            usleep(UInt32(output.bufferLatency * 2_000_000))
        }
        // What the song's end sent (its notes released) goes out, and the guard packet after it
        // (a peer that lost the last packet repairs it from that); then the sessions end (BY).
        // (`stop` of the listener sends each peer a last guard before its BY.)
        // What is scheduled is delivered, then every sequencer destination is reset (All Notes
        // Off, Reset All Controllers) and the client closed.
        for feed in sequencerFeeds { feed.stop() }
        sequencerOutput?.close()
        if let networkOutput {
            networkOutput.stop()
            networkOutput.listener.stop()
            advertisement?.stop()
            advertisement = nil
        }
        // The engine and the device hold each other: let go.
        output.close()
        engine.outputDevice = nil
        // The audio file is complete (a failure stays readable in `audioTap.failure`).
        _ = try? audioTap?.finish()
    }

    deinit { finish() }
}
