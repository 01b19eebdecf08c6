import AudioFiles
import AudioGraph
import Effects
import FoundationEssentials
import MIDICore
import Meters
import PianolaSupport
import SMF
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

extension OfflineRenderer {
    /// Renders `file` into stems and their mix in one pass: one synthesizer per stem, all sharing
    /// the loaded SoundFont, the mix being their sum (the effects, if any, act on the mix only;
    /// stems stay dry). Writes `folder/mix.EXT` and one file per stem (creating the folder), and
    /// returns what each holds. Every file has the same length and starts on the same frame. With
    /// `multichannel`, also writes every stem into that one file, stem k (0-based) on channels
    /// 2k and 2k + 1, each pair bit for bit its stem's file.
    ///
    /// With `options.loudness`, the mix is measured and every file (the mix, the stems, the
    /// multichannel file) is scaled by one gain that brings the mix to the target, so that the
    /// stems still sum to the mix (their float files, without effects, sample for sample, as
    /// before). That gain is not limited: where it would take the mix's true peak past the
    /// target's ceiling, it stops there (the mix is then quieter than the target, and the
    /// summary's `warnings` say by how much). The files are written as floats first, under hidden
    /// names in `folder`, then scaled into their format.
    public func renderStems(
        _ file: MIDIFile, toFolder folder: String, mode: StemMode, fileExtension: String = "wav",
        multichannel: String? = nil, progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> (mix: RenderSummary, stems: [StemInfo]) {
        try checkTiming()
        let sequence = options.excerpt(of: MusicSequence(file: file))
        let plan = StemPlan(sequence, mode: mode, fileExtension: fileExtension).stems
        if let spec = options.effects.first(where: { $0.changesRate }) {
            throw .graph("\(spec.name): changes the pace, so the stems would no longer line up with the mix")
        }
        guard !plan.isEmpty else { throw .graph("the file plays no notes: there is nothing to split") }
        do throws(POSIXReason) { try POSIXSupport.makeDirectories(folder) } catch {
            throw .cannotWrite(path: folder, reason: error.description)
        }
        let rate = options.sampleRate
        let quantum = options.quantumFrames
        let (lanes, warnings) = try makeStemLanes(plan, of: sequence)
        let files = try openStemFiles(
            plan, of: sequence, folder: folder, fileExtension: fileExtension, multichannel: multichannel,
            normalizing: options.loudness != nil)
        defer { for path in files.intermediatePaths { unlink(path) } }
        let chain: EffectChain?
        do {
            chain =
                options.effects.isEmpty
                ? nil
                : try EffectChain(
                    options.effects, sampleRate: rate, channelCount: 2, maximumFrameCount: quantum,
                    songTempo: sequence.startingTempo)
        } catch {
            for writer in files.writers { writer.cancel() }
            throw .graph(error.description)
        }
        let first = RenderChunk(quantumFrames: quantum, quantumCount: 1)
        let mix = RenderChunk(quantumFrames: quantum, quantumCount: 1)
        let workers = lanes.dropFirst().map { LaneWorker(lane: $0, quantumFrames: quantum, quantumCount: 1) }
        for lane in lanes { lane.player.play() }
        for worker in workers { worker.start() }
        defer { for worker in workers { worker.stop() } }

        var position = RenderPosition(latency: chain?.latency ?? 0)
        let mixLevel: PeakAndLoudnessMeter
        do { mixLevel = try PeakAndLoudnessMeter(sampleRate: options.sampleRate, measuresLoudness: false) } catch {
            throw .meter(error)
        }
        // Each stem's sample peak, as the mix's is measured (before any integer encoding clips it).
        var stemPeaks = [Float](repeating: 0, count: plan.count)
        try Self.completing(files.writers) {
            while true {
                lanes[0].render(into: first)
                var stemChunks = [first]
                for worker in workers { stemChunks.append(worker.nextChunk()) }
                let wasDraining = position.draining != nil
                try mixStems(stemChunks, into: mix, files: files, peaks: &stemPeaks, writing: !wasDraining)
                for worker in workers { worker.releaseChunk() }
                chain?.process(mix.audio, frameCount: quantum)
                let isDone = try writeMix(
                    mix, musicPlays: !first.isFinished[0], files: files, level: mixLevel, chain: chain,
                    position: &position)
                if isDone { break }
                // While draining, the progress stays where the music and its tail ended.
                if wasDraining { continue }
                if !progress(Double(position.frames) / rate, options.musicSeconds(of: sequence)) {
                    throw RenderError.cancelled
                }
            }
        }
        var stems = plan.map(\.info)
        for index in stems.indices {
            stems[index].loudness = files.meters[index].integratedLoudness
            stems[index].truePeak = files.meters[index].truePeak
            stems[index].peak = Self.decibels(stemPeaks[index])
        }
        var mixInfo = Self.mixInfo(fileExtension, plan)
        mixInfo.loudness = files.mixMeter.integratedLoudness
        mixInfo.truePeak = files.mixMeter.truePeak
        mixInfo.peak = Self.decibels(mixLevel.peak)
        let (frames, musicFrames) = (position.frames, position.musicFrames)
        var summary = RenderSummary(
            outputPath: folder + "/" + mixInfo.file, frames: frames, sampleRate: options.sampleRate,
            musicSeconds: Double(musicFrames) / rate, tailSeconds: Double(frames - musicFrames) / rate,
            peak: mixLevel.peak, loudness: mixInfo.loudness, truePeak: mixInfo.truePeak,
            samplesOverFullScale: mixLevel.samplesOverFullScale
        )
        summary.warnings = warnings ?? []
        if let target = options.loudness {
            let measured = try normalize(files, to: target, summary: &summary)
            for index in stems.indices {
                stems[index].loudness = measured[index].loudness
                stems[index].truePeak = measured[index].truePeak
            }
            mixInfo.loudness = measured[plan.count].loudness
            mixInfo.truePeak = measured[plan.count].truePeak
        }
        return (summary.encoded(options.encoding), [mixInfo] + stems)
    }

    /// Scales every file of a stems render written as floats (`files.intermediatePaths`) by the
    /// one gain that brings the mix to `target` (`LoudnessNormalizer.linearGain`) into its
    /// final file, in the options' format; returns what each stem and the mix measure then, and
    /// puts the mix's figures (and a warning where the ceiling held the gain back) in `summary`.
    /// On a failure no final file of this pass is left.
    private func normalize(
        _ files: StemFiles, to target: LoudnessTarget, summary: inout RenderSummary
    ) throws(RenderError) -> [LoudnessNormalizer.Measured] {
        let (gain, capped) = LoudnessNormalizer.linearGain(
            loudness: files.mixMeter.integratedLoudness, truePeak: files.mixMeter.truePeak, target: target)
        var measured: [LoudnessNormalizer.Measured] = []
        for (intermediate, final) in zip(files.intermediatePaths, files.finalPaths) {
            do {
                measured.append(
                    try LoudnessNormalizer.scale(
                        intermediate, to: final, gainDecibels: gain, encoding: options.encoding,
                        dither: options.dither, compression: options.compression))
            } catch {
                for path in files.finalPaths.prefix(measured.count) { unlink(path) }
                throw error
            }
        }
        let mix = measured[files.stemCount]
        summary.loudness = mix.loudness
        summary.truePeak = mix.truePeak
        summary.peak = mix.peak
        summary.samplesOverFullScale = mix.samplesOverFullScale
        if capped {
            summary.warnings.append(
                "the mix reached \((mix.loudness * 10).rounded() / 10) LUFS, not \(target.integrated): more gain would "
                    + "take its true peak past \(target.truePeakCeiling) dBTP (stems are scaled by one gain, not "
                    + "limited, so that they still sum to the mix)")
        }
        return measured
    }

    /// One lane per stem, each a fresh synthesizer playing the stem's part of the song; with the
    /// first sampler's sample warnings (what it could not read, the others lack too).
    private func makeStemLanes(
        _ plan: [(info: StemInfo, sequence: MusicSequence)], of sequence: MusicSequence
    ) throws(RenderError) -> (lanes: [RenderLane], warnings: [String]?) {
        if options.engine == .native { return (try makeNativeStemLanes(plan, of: sequence), nil) }
        var lanes: [RenderLane] = []
        // Loading on demand, every stem's sampler holds the song's presets (one copy in memory).
        var usage: PresetUsage?
        var warnings: [String]?
        for stem in plan {
            do {
                let (sampler, used) = try makeSampler(
                    settings: Self.samplerSettings(options), for: sequence, usage: usage)
                usage = used
                if warnings == nil { warnings = sampler.sampleWarnings }
                lanes.append(try RenderLane(sampler: sampler, sequence: stem.sequence, options: options))
            } catch {
                throw .graph("\(error)")
            }
        }
        return (lanes, warnings)
    }

    /// The files a stems render writes, with a loudness meter for each stem and the mix.
    private struct StemFiles {
        /// One per stem, then the mix's, then (when asked for) the multichannel file.
        var writers: [AudioFileWriter] = []
        /// One per stem, then the mix's.
        var meters: [LoudnessMeter] = []
        /// How many stems there are.
        let stemCount: Int
        /// Every stem side by side, a quantum at a time, for the multichannel file.
        let allStems: AudioBuffer?
        /// Where each writer's file goes in the end, in the order of `writers`.
        var finalPaths: [String] = []
        /// Normalizing: the hidden float files the writers write (to be scaled into
        /// `finalPaths`); empty otherwise.
        var intermediatePaths: [String] = []

        var mixWriter: AudioFileWriter { writers[stemCount] }
        var mixMeter: LoudnessMeter { meters[stemCount] }
        var multichannelWriter: AudioFileWriter? { allStems == nil ? nil : writers[stemCount + 1] }
    }

    /// Opens a file and a meter for each stem and the mix in `folder`, and the `multichannel`
    /// file; a failure cancels those already opened. `normalizing`, the writers write floats to
    /// hidden files beside them instead (`StemFiles.intermediatePaths`).
    private func openStemFiles(
        _ plan: [(info: StemInfo, sequence: MusicSequence)], of sequence: MusicSequence, folder: String,
        fileExtension: String, multichannel: String?, normalizing: Bool
    ) throws(RenderError) -> StemFiles {
        var files = StemFiles(
            stemCount: plan.count,
            allStems: multichannel.map { _ in
                AudioBuffer(channelCount: 2 * plan.count, frameCapacity: options.quantumFrames)
            })
        do {
            for _ in 0...plan.count {
                files.meters.append(try LoudnessMeter(channelCount: 2, sampleRate: options.sampleRate))
            }
        } catch {
            throw .meter(error)
        }
        files.finalPaths =
            (plan + [(info: Self.mixInfo(fileExtension, plan), sequence: sequence)]).map { folder + "/" + $0.info.file }
            + (multichannel.map { [$0] } ?? [])
        if normalizing {
            files.intermediatePaths = files.finalPaths.map { Self.hiddenPath(beside: $0, tag: "unnormalized") }
        }
        let paths = normalizing ? files.intermediatePaths : files.finalPaths
        let encoding = normalizing ? .f32 : options.encoding
        do {
            for (index, path) in paths.enumerated() {
                files.writers.append(
                    try AudioFileWriter(
                        path: path, sampleRate: options.sampleRate,
                        channelCount: index > plan.count ? 2 * plan.count : 2,
                        encoding: encoding, expectedFrameCount: options.maximumFrameCount(for: sequence),
                        dither: !normalizing && options.dither,
                        compression: normalizing ? .automatic : options.compression))
            }
        } catch {
            for writer in files.writers { writer.cancel() }
            throw .audio(error)
        }
        return files
    }

    /// Sums a quantum of every stem into `mix` and, while `writing` (not yet draining the mix's
    /// effect latency), writes each to its file, its meter, its `peaks` entry and the
    /// multichannel file.
    private func mixStems(
        _ stemChunks: [RenderChunk], into mix: RenderChunk, files: StemFiles, peaks: inout [Float], writing: Bool
    ) throws {
        let quantum = options.quantumFrames
        mix.audio.clear(frames: quantum)
        mix.voiceCounts[0] = 0
        for (index, chunk) in stemChunks.enumerated() {
            if writing {
                try files.writers[index].write(chunk.audio, from: 0, frameCount: quantum)
                files.meters[index].add(
                    left: chunk.audio.channel(0), right: chunk.audio.channel(1), frameCount: quantum)
                var peak = peaks[index]
                for channel in 0..<2 {
                    let samples = chunk.audio.channel(channel)
                    for frame in 0..<quantum { peak = max(peak, abs(samples[frame])) }
                }
                peaks[index] = peak
            }
            mix.add(chunk)
            if let allStems = files.allStems, writing {
                for channel in 0..<2 {
                    allStems.channel(2 * index + channel).update(from: chunk.audio.channel(channel), count: quantum)
                }
            }
        }
        if let allStems = files.allStems, let writer = files.multichannelWriter, writing {
            try writer.write(allStems, from: 0, frameCount: quantum)
        }
    }

    /// Writes a quantum of the mix (after its chain), its chain's latency taken off the start and
    /// rendered past the end, and moves `position` on (counting the frames the stems have, the
    /// drained ones not); true once the render is done.
    private func writeMix(
        _ mix: RenderChunk, musicPlays: Bool, files: StemFiles, level: PeakAndLoudnessMeter, chain: EffectChain?,
        position: inout RenderPosition
    ) throws -> Bool {
        let quantum = options.quantumFrames
        var quantumPeak: Float = 0
        for channel in 0..<2 {
            let samples = mix.audio.channel(channel)
            for frame in 0..<quantum { quantumPeak = max(quantumPeak, abs(samples[frame])) }
        }
        let skip = min(position.skipping, quantum)
        position.skipping -= skip
        var count = quantum - skip
        if let left = position.draining { count = min(left, quantum) }
        if count > 0 {
            try files.mixWriter.write(mix.audio, from: skip, frameCount: count)
            level.add(mix.audio, from: skip, frameCount: count, peak: quantumPeak)
            files.mixMeter.add(
                left: mix.audio.channel(0) + skip, right: mix.audio.channel(1) + skip, frameCount: count)
        }
        if let left = position.draining {
            position.draining = left - count
            return left - count == 0
        }
        position.frames += quantum
        if musicPlays {
            position.musicFrames = position.frames
            return false
        }
        let tailIsDone = options.tailIsDone(
            tailFrames: position.frames - position.musicFrames, quantum: quantum, peak: quantumPeak,
            voices: mix.voiceCounts[0], quietFrames: &position.quietFrames,
            echoFrames: Int((chain?.longestEcho ?? 0) * options.sampleRate))
        if tailIsDone {
            if position.latency == 0 { return true }
            position.draining = position.latency
        }
        return false
    }

    /// A linear level in dBFS (−∞ for silence).
    private static func decibels(_ level: Float) -> Double {
        level > 0 ? 20 * log10(Double(level)) : -.infinity
    }

    private static func mixInfo(
        _ fileExtension: String, _ plan: [(info: StemInfo, sequence: MusicSequence)]
    )
        -> StemInfo
    {
        StemInfo(
            file: "mix." + fileExtension, kind: "mix", name: "mix",
            tracks: Array(Set(plan.flatMap(\.info.tracks))).sorted(),
            trackNames: [], channels: Array(Set(plan.flatMap(\.info.channels))).sorted(),
            programs: Array(Set(plan.flatMap(\.info.programs))).sorted(), family: nil,
            notes: plan.reduce(0) { $0 + $1.info.notes }, loudness: -.infinity, truePeak: -.infinity)
    }
}
