import AudioFiles
import Meters
import Sampler

/// Why a render stopped early.
public enum RenderError: Error, Sendable, CustomStringConvertible {
    /// The `progress` callback returned false: the render stopped and wrote no output.
    case cancelled
    /// An audio file could not be read or written.
    case audio(AudioFileError)
    /// The output's loudness cannot be measured (a layout the loudness meter does not take).
    case meter(MeterError)
    /// The render could not be set up or run (an effect that cannot be built, a synthesizer that cannot be
    /// made, FluidSynth's player timing with a start or speed, stems of a file without notes); the text says
    /// what.
    case graph(String)
    /// A file beside the audio (a folder, `stems.json`) cannot be written.
    case cannotWrite(path: String, reason: String)
    /// The music lasts `seconds`, more than `RenderOptions.maximumSeconds` (`limit`): refused before
    /// anything is written (a damaged delta time can make a file last hours of silence).
    case tooLong(seconds: Double, limit: Double)
    /// The output would need about `needed` bytes and the file system holding `path` has `available`:
    /// refused before anything is written.
    case notEnoughSpace(path: String, needed: Int, available: Int)
    /// A SoundFont's samples could not be read for the song (loading on demand).
    case soundFont(SoundFontError)
    /// The file holds no note at all: a render would be silence, so nothing is written.
    case noMusic
    /// The render would start at `start` seconds, at or past the music's end (`length` seconds):
    /// nothing is written.
    case startPastEnd(start: Double, length: Double)

    public var description: String {
        switch self {
        case .cancelled: return "interrupted; no output was written"
        case .audio(let error): return error.description
        case .meter(let error): return error.description
        case .graph(let reason): return reason
        case .cannotWrite(let path, let reason): return "\(path): cannot write it (\(reason))"
        case .tooLong(let seconds, let limit):
            return "the music lasts \(Self.clock(seconds)), more than the \(Self.clock(limit)) allowed "
                + Self.maximumSecondsHint
        case .notEnoughSpace(let path, let needed, let available):
            return "\(path): the render needs about \(Self.gigabytes(needed)), and only \(Self.gigabytes(available)) "
                + "is free there"
        case .soundFont(let error): return error.description
        case .noMusic: return "the file holds no notes: nothing to render"
        case .startPastEnd(let start, let length):
            return "the start (\(Self.clock(start))) is at or past the end of the music (\(Self.clock(length)))"
        }
    }

    /// H:MM:SS.
    static func clock(_ seconds: Double) -> String {
        let total = Int(min(max(0, seconds), 1e12).rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes):" + (rest < 10 ? "0" : "") + "\(rest)"
    }

    /// "4.4 GB", "850 MB".
    static func gigabytes(_ bytes: Int) -> String {
        bytes >= 1_000_000_000
            ? "\((Double(bytes) / 1e8).rounded() / 10) GB" : "\(Int((Double(bytes) / 1e6).rounded())) MB"
    }

    /// How a ``tooLong(seconds:limit:)`` description ends: what raises the limit, in the library's
    /// words, for a caller to put in its own (the `pianola` command names `--max-length`).
    public static let maximumSecondsHint =
        "(RenderOptions.maximumSeconds raises it; a damaged file can say hours: the diagnostics of "
        + "MIDIFile.read(path:) list its defects)"
}
