import AudioFiles
import AudioGraph

/// Where and how a playback or live session writes what it plays (`--record-audio`): the main
/// mixer's output, from the first frame the device plays, through an `AudioFileTap`.
public struct OutputRecording: Sendable, Hashable {
    /// The file to write (.wav, .flac, .aiff, .ogg, .opus, .mp3); it must not exist unless `settings.overwrite`.
    public var path: String
    /// Encoding, overwrite, splitting.
    public var settings: AudioFileTap.Settings

    /// Records to `path` with `settings` (16-bit, no overwrite, one file by default).
    public init(path: String, settings: AudioFileTap.Settings = AudioFileTap.Settings()) {
        self.path = path
        self.settings = settings
    }
}

extension AudioEngine {
    /// Creates the file of `recording` and taps the main mixer into it (stereo at `sampleRate`),
    /// taking audio from the first quantum rendered after this call.
    func recordOutput(_ recording: OutputRecording, sampleRate: Double) throws(SessionError) -> AudioFileTap {
        let tap: AudioFileTap
        do {
            tap = try AudioFileTap(
                path: recording.path, channelCount: 2, sampleRate: sampleRate, settings: recording.settings)
        } catch { throw .audioFile(error) }
        do { try installTap(on: mainMixerNode, tap) } catch {
            tap.deleteFiles()
            throw SessionError(error)
        }
        tap.record()
        return tap
    }
}
