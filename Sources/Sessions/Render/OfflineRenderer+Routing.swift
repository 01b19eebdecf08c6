import AudioFiles
import AudioGraph
import Effects
import RateAndPitch
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

extension OfflineRenderer {
    /// Renders `sequence` to a file of `routing.channelCount` channels, each part on its output
    /// channels (`pianola render --channel-map`): the graph `pianola play --channel-map` plays
    /// (one synthesizer per part, each with its own effects, into the output's channel map),
    /// rendered quantum by quantum, so the file holds the samples a device would receive. The
    /// effects' latency is not taken off the start, as it is not when playing; loudness
    /// normalization, which is for a stereo mix, is refused.
    public func render(
        _ sequence: MusicSequence, routing: ChannelRouting, to outputPath: String,
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        guard options.loudness == nil else {
            throw .graph("loudness normalization is for a stereo mix: it does not take a channel map")
        }
        guard options.engine == .fluidSynth else {
            throw .graph("a channel map needs FluidSynth's engine: the native one renders a stereo mix or stems")
        }
        try checkTiming()
        let sequence = options.excerpt(of: sequence)
        let channels = routing.channelCount
        try checkSize(of: sequence, writingTo: outputPath, encoding: options.encoding, channelCount: channels)
        let rate = options.sampleRate
        let quantum = options.quantumFrames
        var settings = Self.samplerSettings(options)
        settings.cpuCores = options.threads
        let sampler = try makeSampler(settings: settings, for: sequence).0
        let engine = AudioEngine()
        let synthesis: RoutedSynthesis
        let player: MusicPlayer
        do throws(any Error) {
            try engine.attach(sampler)
            synthesis = try RoutedSynthesis(
                engine: engine, sampler: sampler, routing: routing, effects: options.effects,
                volume: Float(pow(10, options.gainDecibels / 20)))
            for nodes in synthesis.effectNodes {
                retimeDelays(nodes, specs: options.effects, songTempo: sequence.startingTempo)
            }
            player = MusicPlayer(sequence: sequence, destination: synthesis.destination, timing: options.timing.policy)
            player.rate = options.speed * (try PlaybackSession.checkedRate(of: options.effects))
            player.transpose = options.transpose
            if options.startSeconds > 0 { player.seek(toSeconds: options.startSeconds) }
            try engine.addRenderObserver(player)
            try engine.enableManualRenderingMode(
                format: AudioFormat(sampleRate: rate, channelCount: channels), maximumFrameCount: quantum)
        } catch {
            throw .graph("\(error)")
        }
        // Quiet for this long may still be followed by sound: a delay's echo, or what a
        // time-pitch holds back.
        let nodes = synthesis.effectNodes.first ?? []
        let echoFrames = Int(
            ((nodes.compactMap { ($0 as? DelayNode)?.delayTime }.max() ?? 0)
                + nodes.reduce(0) { $0 + (($1 as? TimePitchNode)?.latency ?? 0) }) * rate)
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: outputPath, sampleRate: rate, channelCount: channels, encoding: options.encoding,
                expectedFrameCount: options.maximumFrameCount(for: sequence), dither: options.dither,
                compression: options.compression)
        } catch {
            throw .audio(error)
        }
        let buffer = AudioBuffer(channelCount: channels, frameCapacity: quantum)
        var frames = 0
        var musicFrames = 0
        var quietFrames = 0
        var peak: Float = 0
        var overFullScale = 0
        let music = options.musicSeconds(of: sequence)
        player.play()
        try Self.completing([writer]) {
            while true {
                engine.render(frameCount: quantum, into: buffer)
                var quantumPeak: Float = 0
                for channel in 0..<channels {
                    let samples = buffer.channel(channel)
                    for frame in 0..<quantum {
                        quantumPeak = max(quantumPeak, abs(samples[frame]))
                        if abs(samples[frame]) > 1 { overFullScale += 1 }
                    }
                }
                peak = max(peak, quantumPeak)
                try writer.write(buffer, from: 0, frameCount: quantum)
                frames += quantum
                if !player.isFinished {
                    musicFrames = frames
                } else if options.tailIsDone(
                    tailFrames: frames - musicFrames, quantum: quantum, peak: quantumPeak,
                    voices: synthesis.activeVoiceCount, quietFrames: &quietFrames, echoFrames: echoFrames)
                {
                    break
                }
                if !progress(Double(frames) / rate, music) { throw RenderError.cancelled }
            }
        }
        var summary = RenderSummary(
            outputPath: outputPath, frames: frames, sampleRate: rate, musicSeconds: Double(musicFrames) / rate,
            tailSeconds: Double(frames - musicFrames) / rate, peak: peak, samplesOverFullScale: overFullScale
        )
        summary.warnings = sampler.sampleWarnings
        return summary.encoded(options.encoding)
    }
}
