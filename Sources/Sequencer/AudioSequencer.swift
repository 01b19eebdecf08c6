import AudioGraph
import SMF

/// Plays a MIDI sequence through an engine's instruments: the counterpart of AVAudioSequencer,
/// made with its engine so that it cannot be left out of the render.
///
/// It adds its player to the engine's render itself (there is no observer to forget), plays at
/// the rate the engine renders at (there is no rate to give), and sends every track that names
/// no destination of its own (`MusicSequence.Track.destination`) to the first node attached to
/// the engine that takes MIDI, such as a `SamplerNode`. What it cannot do is a typed error:
/// starting with nothing loaded, with no node to play into, or into a sampler with no SoundFont
/// loaded (which would play silence).
///
/// `isFinished` turns true at the song's last event, with its last notes still ringing;
/// `isFinished(includingTail: true)` waits until the engine's output has died away, as
/// `OfflineRenderer` ends a file:
///
/// ```swift
/// while !sequencer.isFinished(includingTail: true) {
///     try engine.renderOffline(frameCount: 512, into: buffer)
///     try writer.write(buffer, frameCount: 512)
/// }
/// ```
///
/// For more control (several players, a timing policy, a render of one's own) use `MusicPlayer`.
public final class AudioSequencer: @unchecked Sendable {
    /// The engine the sequencer plays through: its render drives the player, and its first attached
    /// node that takes MIDI receives every track without a destination of its own.
    public let engine: AudioEngine
    /// The loaded sequence, if any.
    public private(set) var sequence: MusicSequence?
    /// The player of the loaded sequence, once `prepareToPlay` or `start` made it.
    public private(set) var player: MusicPlayer?
    /// The rate and position set before there was a player.
    private var rateSetting = 1.0
    private var startSeconds: Double?
    /// The longest `isFinished(includingTail:)` waits, after the song's end, for the output to
    /// die away, in seconds (30 by default, as `OfflineRenderer`'s automatic tail): a sound that
    /// never ends (a looped sample, an effect that rings on) stops there.
    public var maximumTailSeconds = 30.0
    /// How long the output must stay silent, while voices still sound, for the tail to be over:
    /// a looped sample at rest, or an echo still to come, is waited for this long.
    static let quietSecondsWithVoices = 2.0

    /// A sequencer that plays into `engine`'s instruments.
    public init(audioEngine engine: AudioEngine) {
        self.engine = engine
    }

    deinit {
        if let player { try? engine.removeRenderObserver(player) }  // only fails when never added
    }

    /// Loads a Standard MIDI File (damage is recovered, as `MIDIFile.read` does).
    public func load(from path: String) throws(MIDIFileError) {
        load(try MusicSequence(path: path))
    }

    /// Loads a sequence in place of the one before (which stops).
    public func load(_ sequence: MusicSequence) {
        stop()
        if let player { try? engine.removeRenderObserver(player) }  // only fails when never added
        player = nil
        startSeconds = nil
        self.sequence = sequence
    }

    /// The tracks of the loaded sequence; set a track's `destination` to send it elsewhere.
    public var tracks: [MusicSequence.Track] { sequence?.tracks ?? [] }

    /// Makes the player and adds it to the engine's render, so that `start` begins at once.
    ///
    /// - Throws: `AudioSequencerError.nothingLoaded` before a sequence is loaded,
    ///   `.noDestination` when no node that takes MIDI is attached to the engine, and
    ///   `.noSoundFont` when a node the tracks play into cannot play notes (a `SamplerNode`
    ///   with no SoundFont loaded): the song would play as silence.
    public func prepareToPlay() throws(AudioSequencerError) {
        guard player == nil else { return }
        guard let sequence else { throw .nothingLoaded }
        guard let destination = defaultDestination else { throw .noDestination }
        try checkInstruments(of: sequence, defaultDestination: destination)
        let player = MusicPlayer(sequence: sequence, destination: destination)
        player.rate = rateSetting
        if let startSeconds { player.seek(toSeconds: startSeconds) }
        do { try engine.addRenderObserver(player) } catch { throw .engine("\(error)") }
        self.player = player
    }

    /// The first node attached to the engine that takes MIDI.
    private var defaultDestination: (any MIDIReceivingNode)? {
        engine.attachedNodes.first(where: { $0 is any MIDIReceivingNode }) as? any MIDIReceivingNode
    }

    /// Throws `.noSoundFont` naming the first node the tracks of `sequence` play into (their own
    /// destinations, and `defaultDestination` for those without) that cannot play notes; behind a
    /// router or a fan-out, the node there that cannot.
    private func checkInstruments(
        of sequence: MusicSequence, defaultDestination: any MIDIReceivingNode
    ) throws(AudioSequencerError) {
        var destinations: [any MIDIReceivingNode] = sequence.tracks.compactMap(\.destination)
        if sequence.tracks.isEmpty || sequence.tracks.contains(where: { $0.destination == nil }) {
            destinations.insert(defaultDestination, at: 0)
        }
        for destination in destinations where !destination.canPlayNotes {
            var silent: any MIDIReceivingNode = destination
            while let next = Self.inner(silent)?.first(where: { !$0.canPlayNotes }) { silent = next }
            throw .noSoundFont(node: silent.name)
        }
    }

    /// The destinations behind a router or a fan-out.
    private static func inner(_ node: any MIDIReceivingNode) -> [any MIDIReceivingNode]? {
        (node as? MIDIChannelRouter)?.destinations ?? (node as? MIDIFanOut)?.destinations
    }

    /// Starts (or resumes) playing from the current position.
    ///
    /// - Throws: what `prepareToPlay()` throws; `.noSoundFont` also when the player was
    ///   prepared before and a node it plays into has lost its SoundFonts since.
    public func start() throws(AudioSequencerError) {
        try prepareToPlay()
        if let sequence, let destination = defaultDestination {
            try checkInstruments(of: sequence, defaultDestination: destination)
        }
        player?.play()
    }

    /// Stops playing (notes released); `start` resumes from here.
    public func stop() { player?.pause() }

    /// Whether it is playing.
    public var isPlaying: Bool { player?.isPlaying ?? false }

    /// True once the sequence has played to its end: its last event. The notes it released there
    /// are still ringing (a release, a reverb): `isFinished(includingTail: true)` waits for them.
    public var isFinished: Bool { player?.isFinished ?? false }

    /// Whether the sequence has played to its end and, with `includingTail`, its sound has died
    /// away: the engine's output has stayed below `AudioEngine.silenceThreshold` (−90 dBFS) for a
    /// quantum with no voice left in the nodes the player plays into (`activeVoiceCount`), or for
    /// 2 s with voices left (looped samples at rest), or the tail has lasted
    /// `maximumTailSeconds`. This is how `OfflineRenderer`'s automatic tail ends; loop on it to
    /// render a song whole, offline (`engine.renderOffline(frameCount:into:)`) or on a device.
    /// Without `includingTail`, it is `isFinished`.
    ///
    /// What it listens to is the engine's output: the echo of a delay node that comes after more
    /// than a quantum of silence, once the voices have ended, is not waited for.
    public func isFinished(includingTail: Bool) -> Bool {
        guard let player, player.isFinished else { return false }
        guard includingTail, let rate = engine.format?.sampleRate, rate > 0 else { return true }
        let now = engine.currentSampleTime
        let ended = player.finishedSampleTime.load(ordering: .relaxed)
        if ended <= now && Double(now - ended) >= maximumTailSeconds * rate { return true }
        let silent = engine.silentFrameCount
        guard silent > 0 else { return false }
        let voices = player.playhead.destinations.reduce(0) { $0 + $1.activeVoiceCount }
        return voices == 0 || Double(silent) >= Self.quietSecondsWithVoices * rate
    }

    /// The position in seconds (setting it seeks, chasing programs and controllers).
    public var currentPositionInSeconds: Double {
        get { player?.currentPositionInSeconds ?? startSeconds ?? 0 }
        set {
            if let player { player.seek(toSeconds: newValue) } else { startSeconds = newValue }
        }
    }

    /// The position in beats.
    public var currentPositionInBeats: Double {
        get { sequence?.beats(forSeconds: currentPositionInSeconds) ?? 0 }
        set { currentPositionInSeconds = sequence?.seconds(forBeats: newValue) ?? 0 }
    }

    /// The playback rate (2 plays twice as fast).
    public var rate: Double {
        get { rateSetting }
        set {
            rateSetting = newValue
            player?.rate = newValue
        }
    }
}

/// Why an `AudioSequencer` cannot play.
public enum AudioSequencerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing was loaded.
    case nothingLoaded
    /// No node that takes MIDI is attached to the engine (attach a `SamplerNode`).
    case noDestination
    /// The node the sequence would play into (by name) cannot play notes: a `SamplerNode` with no
    /// SoundFont loaded, which would play the song as silence. Load one first
    /// (`loadSoundFont(at:)`, `loadDefaultSoundFont()`).
    case noSoundFont(node: String)
    /// The engine refused the player.
    case engine(String)

    public var description: String {
        switch self {
        case .nothingLoaded: return "the sequencer has nothing to play: load a sequence first"
        case .noDestination: return "no node that takes MIDI is attached to the engine (attach a sampler)"
        case .noSoundFont(let node):
            return "\(node) has no SoundFont loaded, so the song would play as silence: "
                + "load one first (loadSoundFont(at:) or loadDefaultSoundFont())"
        case .engine(let reason): return "the engine refused the sequencer's player: \(reason)"
        }
    }
}
