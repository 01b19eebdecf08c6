import AudioGraph
import AudioIO

/// What a render writes, measured as it goes: the peak, the samples over full scale (they clip
/// in an integer file) and the integrated loudness (BS.1770, libebur128).
final class OutputMeter {
    private(set) var peak: Float = 0
    private(set) var samplesOverFullScale = 0
    private let loudness: LoudnessMeter?

    /// Without `measuresLoudness`, only the peak and the samples over full scale.
    init(sampleRate: Double, measuresLoudness: Bool = true) throws(RenderError) {
        do {
            loudness =
                measuresLoudness
                ? try LoudnessMeter(channelCount: 2, sampleRate: sampleRate, measuresTruePeakAndRange: false) : nil
        } catch { throw .audio(error) }
    }

    /// Measures `frameCount` frames of `audio` from `start`: what was written. `peak` is their
    /// peak as the caller found it (the quantum's); nil finds it here. Only the first two channels
    /// count; a mono buffer's loudness is not measured.
    func add(_ audio: AudioBuffer, from start: Int, frameCount: Int, peak known: Float? = nil) {
        guard frameCount > 0 else { return }
        let channels = min(2, audio.channelCount)
        var chunkPeak: Float = 0
        if let known {
            chunkPeak = known
        } else {
            for channel in 0..<channels {
                let samples = audio.channel(channel) + start
                for frame in 0..<frameCount { chunkPeak = max(chunkPeak, abs(samples[frame])) }
            }
        }
        if chunkPeak > 1 {
            for channel in 0..<channels {
                let samples = audio.channel(channel) + start
                for frame in 0..<frameCount where abs(samples[frame]) > 1 { samplesOverFullScale += 1 }
            }
        }
        peak = max(peak, chunkPeak)
        guard channels == 2 else { return }
        loudness?.add(left: audio.channel(0) + start, right: audio.channel(1) + start, frameCount: frameCount)
    }

    /// LUFS; −∞ for silence (nil when not measured).
    var integratedLoudness: Double? { loudness?.integratedLoudness }
}
