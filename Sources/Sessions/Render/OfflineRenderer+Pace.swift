import AudioFiles
import Effects
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

extension OfflineRenderer {
    /// Renders `sequence` through effects of which some change the pace (`varispeed`,
    /// `timepitch`): the song through the effects before the first of those into a float file
    /// beside `outputPath`, then that file through the rest (`AudioFileProcessor`, as `pianola
    /// process` runs them) into `outputPath`. The summary is of the output: its length, peak and
    /// loudness, and the music's length at the new pace.
    func renderChangingPace(
        _ sequence: MusicSequence, to outputPath: String, encoding: AudioFile.Encoding,
        progress: (Double, Double) -> Bool
    ) throws(RenderError) -> RenderSummary {
        let split = options.effects.firstIndex { $0.changesRate } ?? options.effects.count
        try checkSize(of: sequence, writingTo: outputPath, encoding: encoding)
        var first = options
        first.effects = Array(options.effects[..<split])
        first.loudness = nil
        first.encoding = .f32
        let stage = OfflineRenderer(sharingSoundFontOf: self, options: first)
        let intermediate = Self.hiddenPath(beside: outputPath, tag: "unprocessed")
        defer { unlink(intermediate) }
        // One bar for both steps: the synthesis takes most of the time.
        let music = options.musicSeconds(of: sequence)
        let synthesized = try stage.render(sequence, to: intermediate) { done, total in
            progress(0.75 * music * min(1, done / max(total, 1e-9)), music)
        }
        var processor = AudioFileProcessor(effects: Array(options.effects[split...]))
        processor.songTempo = sequence.startingTempo
        processor.measuresOutput = true
        processor.dither = options.dither
        processor.compression = options.compression
        let processed = try processor.process(intermediate, to: outputPath, encoding: encoding) { done, total in
            progress(music * (0.75 + 0.25 * min(1, done / max(total, 1e-9))), music)
        }
        let rate = options.sampleRate
        let musicSeconds = min(
            synthesized.musicSeconds / EffectSpec.rateFactor(of: options.effects), Double(processed.outputFrames) / rate
        )
        return RenderSummary(
            outputPath: outputPath, frames: processed.outputFrames, sampleRate: rate, musicSeconds: musicSeconds,
            tailSeconds: Double(processed.outputFrames) / rate - musicSeconds, peak: processed.peak ?? 0,
            loudness: processed.loudness, samplesOverFullScale: processed.samplesOverFullScale ?? 0
        )
        .encoded(encoding)
    }
}
