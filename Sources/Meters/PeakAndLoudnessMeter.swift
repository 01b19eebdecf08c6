import AudioGraph

/// What a render writes, measured as it goes: its peak, its samples over full scale (they clip
/// in an integer file) and its integrated loudness (BS.1770, by `LoudnessMeter`). It takes planar
/// buffers off the render thread (the offline renderer's, the file processor's output).
package final class PeakAndLoudnessMeter {
    /// The highest absolute sample so far (linear).
    package private(set) var peak: Float = 0
    /// Samples beyond ±1 so far.
    package private(set) var samplesOverFullScale = 0
    private let loudness: LoudnessMeter?

    /// Without `measuresLoudness`, only the peak and the samples over full scale.
    package init(sampleRate: Double, measuresLoudness: Bool = true) throws(MeterError) {
        loudness =
            measuresLoudness
            ? try LoudnessMeter(channelCount: 2, sampleRate: sampleRate, measuresTruePeakAndRange: false) : nil
    }

    /// Measures `frameCount` frames of `audio` from `start`: what was written. `peak` is their
    /// peak as the caller found it (the quantum's); nil finds it here. Only the first two channels
    /// count; a mono buffer's loudness is not measured.
    package func add(_ audio: AudioBuffer, from start: Int, frameCount: Int, peak known: Float? = nil) {
        guard frameCount > 0 else { return }
        let channels = min(2, audio.channelCount)
        var chunkPeak: Float = 0
        if let known {
            chunkPeak = known
        } else {
            for channel in 0..<channels {
                let measured = LevelMeasurement.sumOfSquaresAndPeak(audio.channel(channel) + start, count: frameCount)
                chunkPeak = max(chunkPeak, measured.peak)
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
    package var integratedLoudness: Double? { loudness?.integratedLoudness }
}
