import AudioGraph
import SMF

/// Plays a MIDI sequence through an engine's instruments: the counterpart of AVAudioSequencer,
/// made with its engine so that it cannot be left out of the render.
///
/// It adds its player to the engine's render itself (there is no observer to forget), plays at
/// the rate the engine renders at (there is no rate to give), and sends every track that names
/// no destination of its own (`MusicSequence.Track.destination`) to the first node attached to
/// the engine that takes MIDI, such as a `SamplerNode`. What it cannot do is a typed error:
/// starting with nothing loaded, or with no node to play into.
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
    public func prepareToPlay() throws(AudioSequencerError) {
        guard player == nil else { return }
        guard let sequence else { throw .nothingLoaded }
        guard
            let destination = engine.attachedNodes.first(where: { $0 is any MIDIReceivingNode })
                as? any MIDIReceivingNode
        else { throw .noDestination }
        let player = MusicPlayer(sequence: sequence, destination: destination)
        player.rate = rateSetting
        if let startSeconds { player.seek(toSeconds: startSeconds) }
        do { try engine.addRenderObserver(player) } catch { throw .engine("\(error)") }
        self.player = player
    }

    /// Starts (or resumes) playing from the current position.
    public func start() throws(AudioSequencerError) {
        try prepareToPlay()
        player?.play()
    }

    /// Stops playing (notes released); `start` resumes from here.
    public func stop() { player?.pause() }

    /// Whether it is playing.
    public var isPlaying: Bool { player?.isPlaying ?? false }

    /// True once the sequence has played to its end.
    public var isFinished: Bool { player?.isFinished ?? false }

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
    /// The engine refused the player.
    case engine(String)

    public var description: String {
        switch self {
        case .nothingLoaded: return "the sequencer has nothing to play: load a sequence first"
        case .noDestination: return "no node that takes MIDI is attached to the engine (attach a sampler)"
        case .engine(let reason): return "the engine refused the sequencer's player: \(reason)"
        }
    }
}
