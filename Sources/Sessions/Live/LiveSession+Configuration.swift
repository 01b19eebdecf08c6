import ALSAIO
import AudioFiles
import Effects
import JACKIO
import MIDIIO
import Sampler

extension LiveSession {
    /// What a live session is made of.
    public struct Configuration: Sendable {
        /// The SoundFonts (.sf2/.sf3), stacked: a preset of a later font hides an earlier one's.
        public var soundFonts: [String]
        /// The ALSA device, its rate and buffer (a small buffer: the latency). A device that does
        /// not pace the stream (ALSA's `null`) is kept to real time by the clock
        /// (`ALSAOutput.Configuration.pacesUnpacedDevice`), as live input needs.
        public var device: ALSAOutput.Configuration
        /// The name under which the ALSA sequencer lists this session's client.
        public var clientName = "Pianola"
        /// Sources to connect: `CLIENT:PORT` or client names; connected again when they come back.
        /// With `jack`: JACK MIDI ports (`client:port`) or client names.
        public var sources: [String] = []
        /// Connect every MIDI source, including those plugged in later (with `jack`: every
        /// physical MIDI source there is when the session starts).
        public var autoconnect = false
        /// Play through a JACK server as this client instead of the ALSA `device`, with MIDI from
        /// its `midi_in` port (events at their frames, no added latency) instead of the ALSA
        /// sequencer; network MIDI still comes in too.
        public var jack: JACKOutput.Configuration?
        /// Network MIDI (RTP-MIDI sessions), if any.
        public var network: NetworkMIDI?
        /// The synthesizer: polyphony, interpolation, reverb and chorus, program overrides (a
        /// channel keeps its program whatever a keyboard selects), muted channels (its sample rate
        /// is the device's).
        public var sampler = SamplerNode.Settings()
        /// The synthesizer: FluidSynth (`sampler`, the default) or Pianola's own voice engine
        /// (one SoundFont, every sample read first; `sampler`'s polyphony and reverb and chorus
        /// switches apply, its interpolation does not; no channel routing, program overrides or
        /// muted channels).
        public var engine: SynthesisEngine = .fluidSynth
        /// Output gain in dB, at the main mixer.
        public var gainDecibels = 0.0
        /// The fixed delay from a message's arrival to its sound, on top of the output buffer.
        public var delay: Duration = .milliseconds(1)
        /// Effects on the sampler's output, in order.
        public var effects: [EffectSpec] = []
        /// Whether what is played is recorded (`LiveSession.writeRecording(to:)`).
        public var recordsMIDI = false
        /// Write the mixed output to an audio file as it plays; with `recordsMIDI`, the MIDI file then has
        /// each message where the audio has it (sample-aligned).
        public var recordsAudio: OutputRecording?
        /// MIDI channels played on other output channels than 1–2 (`--channel-map`): a keyboard
        /// split across outputs, say. The device opens with the routing's channel count. Not with
        /// `recordsAudio`.
        public var channelRouting: ChannelRouting?
        /// ALSA sequencer destinations that get what comes in, at once, as it comes (MIDI thru:
        /// an external synthesizer layered with the sampler), from the client `CLIENT-NAME thru`.
        /// From sequencer and network sources; not with `jack` (JACK routes its own MIDI).
        public var thru: [String] = []

        /// A configuration playing `soundFonts` on `device` (by default: `default`, 44100 Hz, 2 periods of 128
        /// frames), everything else at its default.
        public init(
            soundFonts: [String], device: ALSAOutput.Configuration = ALSAOutput.Configuration(periodFrames: 128)
        ) {
            self.soundFonts = soundFonts
            self.device = device
        }
    }

    /// Network MIDI for a live session: RTP-MIDI sessions that peers open, sessions this side
    /// opens, or both.
    public struct NetworkMIDI: Sendable {
        /// Where to accept sessions (its control port; data is on the next), or nil to accept
        /// only the sessions this side opens (then on any free pair of ports).
        public var listen: RTPMIDIAddress?
        /// Peers to open sessions to (their control ports).
        public var peers: [RTPMIDIAddress] = []
        /// The addresses whose peers may join (by the address an invitation comes from, never
        /// by the session name a peer gives); empty: anyone.
        public var allow: [RTPMIDIAddressRange] = []
        /// A session silent for this long is ended and its notes released.
        public var sessionTimeout: Duration = .seconds(60)
        /// Advertise the listening session over mDNS (avahi), so Macs and iPads list it by name.
        public var advertises = true
        /// The session name offered to peers.
        public var name = "Pianola"

        /// Network MIDI listening at `listen` (if given) and opening sessions to `peers`, everything else at
        /// its default.
        public init(listen: RTPMIDIAddress? = nil, peers: [RTPMIDIAddress] = []) {
            self.listen = listen
            self.peers = peers
        }
    }
}

extension LiveSession.NetworkMIDI {
    /// Advertises the session `listener` takes over mDNS (avahi), when it listens and is asked
    /// to: the advertisement started, or why there is none (a note, not an error: on loopback
    /// only, or no avahi); neither when not asked. Shared by `live` and `play`.
    func advertise(_ listener: RTPMIDIListener) -> (RTPMIDIAdvertisement?, reason: String?) {
        guard listen != nil, advertises else { return (nil, nil) }
        guard !listener.host.hasPrefix("127.") else { return (nil, "the session listens on loopback only") }
        let candidate = RTPMIDIAdvertisement(name: listener.name, port: listener.port)
        do {
            try candidate.start()
            return (candidate, nil)
        } catch {
            if case .advertisementUnavailable(let reason) = error { return (nil, reason) }
            return (nil, error.description)
        }
    }
}
