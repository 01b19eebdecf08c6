import ALSAIO
import AudioFiles
import AudioGraph
import Effects
import JACKIO
import MIDIIO
import SMF
import Sampler

/// Why a playback or live session could not be set up or go on; the description says what and
/// where, in one line.
public enum SessionError: Error, Sendable, CustomStringConvertible {
    /// A SoundFont could not be loaded, or the synthesizer could not be created.
    case soundFont(SoundFontError)
    /// The ALSA device could not be opened, configured or started.
    case device(ALSAPCMError)
    /// The JACK client could not be opened (no JACK library, no server), or the server stopped it.
    case jack(JACKError)
    /// The audio graph refused a node, a connection, a tap or a render observer.
    case graph(AudioGraphError)
    /// An effect spec names no effect or has a bad value.
    case effects(EffectSpecError)
    /// MIDI input failed: no ALSA sequencer, a source that matches no port or cannot be connected, network
    /// ports that cannot be opened, a peer that does not resolve.
    case midi(MIDIIOError)
    /// The recording could not be written as a MIDI file.
    case midiFile(MIDIFileError)
    /// An audio file could not be created or written (an existing file, a full disk).
    case audioFile(AudioFileError)
    /// A file the session writes (a recording, a report).
    case cannotWrite(path: String, reason: String)
    /// Anything else a building block reported.
    case failed(String)

    /// The error a building block threw, as a session error.
    init(_ error: any Error) {
        switch error {
        case let error as SessionError: self = error
        case let error as SoundFontError: self = .soundFont(error)
        case let error as ALSAPCMError: self = .device(error)
        case let error as AudioGraphError: self = .graph(error)
        case let error as JACKError: self = .jack(error)
        case let error as EffectSpecError: self = .effects(error)
        case let error as MIDIIOError: self = .midi(error)
        case let error as MIDIFileError: self = .midiFile(error)
        case let error as AudioFileError: self = .audioFile(error)
        default: self = .failed("\(error)")
        }
    }

    public var description: String {
        switch self {
        case .soundFont(let error): return error.description
        case .device(let error): return error.description
        case .graph(let error): return error.description
        case .jack(let error): return error.description
        case .effects(let error): return error.description
        case .midi(let error): return error.description
        case .midiFile(let error): return error.description
        case .audioFile(let error): return error.description
        case .cannotWrite(let path, let reason): return "\(path): cannot write: \(reason)"
        case .failed(let reason): return reason
        }
    }
}
