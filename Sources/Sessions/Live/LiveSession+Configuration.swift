import AudioIO
import Effects
import MIDIIO

extension LiveSession {
    /// What a live session is made of.
    public struct Configuration: Sendable {
        /// The SoundFont (.sf2/.sf3).
        public var soundFont: String
        /// The ALSA device, its rate and buffer (a small buffer: the latency).
        public var device: ALSAOutput.Configuration
        /// The name under which the ALSA sequencer lists this session's client.
        public var clientName = "Pianola"
        /// Sources to connect: `CLIENT:PORT` or client names; connected again when they come back.
        public var sources: [String] = []
        /// Connect every MIDI source, including those plugged in later.
        public var autoconnect = false
        /// Network MIDI (RTP-MIDI sessions), if any.
        public var network: NetworkMIDI?
        /// Programs to start channels on.
        public var programs: [ProgramAssignment] = []
        /// The fixed delay from a message's arrival to its sound, on top of the output buffer.
        public var delay: Duration = .milliseconds(1)
        /// Effects on the sampler's output, in order.
        public var effects: [EffectSpec] = []
        /// Whether what is played is recorded (`LiveSession.writeRecording(to:)`).
        public var recordsMIDI = false

        public init(soundFont: String, device: ALSAOutput.Configuration = ALSAOutput.Configuration(periodFrames: 128)) {
            self.soundFont = soundFont
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
        /// Session names or IP addresses allowed to join; empty: anyone.
        public var allow: [String] = []
        /// A session silent for this long is ended and its notes released.
        public var sessionTimeout: Duration = .seconds(60)
        /// Advertise the listening session over mDNS (avahi), so Macs and iPads list it by name.
        public var advertises = true
        /// The session name offered to peers.
        public var name = "Pianola"

        public init(listen: RTPMIDIAddress? = nil, peers: [RTPMIDIAddress] = []) {
            self.listen = listen
            self.peers = peers
        }
    }

    /// A channel's program at the start.
    public struct ProgramAssignment: Sendable, Hashable {
        /// 0…15.
        public var channel: UInt8
        /// 0…127.
        public var program: UInt8

        public init(channel: UInt8, program: UInt8) {
            self.channel = channel
            self.program = program
        }
    }
}
