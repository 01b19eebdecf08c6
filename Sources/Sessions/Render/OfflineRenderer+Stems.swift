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
    public func renderStems(
        _ file: MIDIFile, toFolder folder: String, mode: StemMode, fileExtension: String = "wav",
        multichannel: String? = nil, progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> (mix: RenderSummary, stems: [StemInfo]) {
        try checkTiming()
        let sequence = MusicSequence(file: file)
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
        var lanes: [RenderLane] = []
        // Loading on demand, every stem's sampler holds the song's presets (one copy in memory).
        var usage: PresetUsage?
        // The first sampler reads the samples; what it could not read, the others lack too.
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
        var writers: [AudioFileWriter] = []
        var meters: [LoudnessMeter] = []
        do {
            for _ in 0...plan.count {
                meters.append(try LoudnessMeter(channelCount: 2, sampleRate: options.sampleRate))
            }
        } catch {
            throw .meter(error)
        }
        do {
            for stem in plan + [(info: Self.mixInfo(fileExtension, plan), sequence: sequence)] {
                writers.append(
                    try AudioFileWriter(
                        path: folder + "/" + stem.info.file, sampleRate: options.sampleRate,
                        encoding: options.encoding, expectedFrameCount: options.maximumFrameCount(for: sequence)))
            }
            if let multichannel {
                writers.append(
                    try AudioFileWriter(
                        path: multichannel, sampleRate: options.sampleRate, channelCount: 2 * plan.count,
                        encoding: options.encoding, expectedFrameCount: options.maximumFrameCount(for: sequence)))
            }
        } catch {
            for writer in writers { writer.cancel() }
            throw .audio(error)
        }
        let chain: EffectChain?
        do {
            chain =
                options.effects.isEmpty
                ? nil
                : try EffectChain(
                    options.effects, sampleRate: rate, channelCount: 2, maximumFrameCount: quantum,
                    songTempo: sequence.startingTempo)
        } catch {
            for writer in writers { writer.cancel() }
            throw .graph(error.description)
        }
        let first = RenderChunk(quantumFrames: quantum, quantumCount: 1)
        let mix = RenderChunk(quantumFrames: quantum, quantumCount: 1)
        let workers = lanes.dropFirst().map { LaneWorker(lane: $0, quantumFrames: quantum, quantumCount: 1) }
        for lane in lanes { lane.player.play() }
        for worker in workers { worker.start() }
        defer { for worker in workers { worker.stop() } }

        let latency = chain?.latency ?? 0
        var skipping = latency
        var draining: Int?
        var frames = 0
        var musicFrames = 0
        var quietFrames = 0
        let mixLevel: PeakAndLoudnessMeter
        do { mixLevel = try PeakAndLoudnessMeter(sampleRate: options.sampleRate, measuresLoudness: false) } catch {
            throw .meter(error)
        }
        let mixWriter = writers[plan.count]
        let mixMeter = meters[plan.count]
        let allStems = multichannel.map { _ in AudioBuffer(channelCount: 2 * plan.count, frameCapacity: quantum) }
        try Self.completing(writers) {
            rendering: while true {
                lanes[0].render(into: first)
                var stemChunks = [first]
                for worker in workers { stemChunks.append(worker.nextChunk()) }
                mix.audio.clear(frames: quantum)
                mix.voiceCounts[0] = 0
                for (index, chunk) in stemChunks.enumerated() {
                    if draining == nil {
                        try writers[index].write(chunk.audio, from: 0, frameCount: quantum)
                        meters[index].add(
                            left: chunk.audio.channel(0), right: chunk.audio.channel(1), frameCount: quantum)
                    }
                    mix.add(chunk)
                    if let allStems, draining == nil {
                        for channel in 0..<2 {
                            allStems.channel(2 * index + channel).update(
                                from: chunk.audio.channel(channel), count: quantum)
                        }
                    }
                }
                if let allStems, draining == nil {
                    try writers[plan.count + 1].write(allStems, from: 0, frameCount: quantum)
                }
                for worker in workers { worker.releaseChunk() }
                chain?.process(mix.audio, frameCount: quantum)
                var quantumPeak: Float = 0
                for channel in 0..<2 {
                    let samples = mix.audio.channel(channel)
                    for frame in 0..<quantum { quantumPeak = max(quantumPeak, abs(samples[frame])) }
                }
                // The mix, its chain's latency taken off the start and rendered past the end.
                let skip = min(skipping, quantum)
                skipping -= skip
                var count = quantum - skip
                if let left = draining { count = min(left, quantum) }
                if count > 0 {
                    try mixWriter.write(mix.audio, from: skip, frameCount: count)
                    mixLevel.add(mix.audio, from: skip, frameCount: count, peak: quantumPeak)
                    mixMeter.add(
                        left: mix.audio.channel(0) + skip, right: mix.audio.channel(1) + skip, frameCount: count)
                }
                if let left = draining {
                    draining = left - count
                    if left - count == 0 { break rendering }
                    continue
                }
                frames += quantum
                if !first.isFinished[0] {
                    musicFrames = frames
                } else {
                    let tailIsDone = options.tailIsDone(
                        tailFrames: frames - musicFrames, quantum: quantum, peak: quantumPeak,
                        voices: mix.voiceCounts[0], quietFrames: &quietFrames,
                        echoFrames: Int((chain?.longestEcho ?? 0) * rate))
                    if tailIsDone {
                        if latency == 0 { break rendering }
                        draining = latency
                    }
                }
                if !progress(Double(frames) / rate, options.musicSeconds(of: sequence)) { throw RenderError.cancelled }
            }
        }
        var stems = plan.map(\.info)
        for index in stems.indices {
            stems[index].loudness = meters[index].integratedLoudness
            stems[index].truePeak = meters[index].truePeak
        }
        var mixInfo = Self.mixInfo(fileExtension, plan)
        mixInfo.loudness = mixMeter.integratedLoudness
        mixInfo.truePeak = mixMeter.truePeak
        var summary = RenderSummary(
            outputPath: folder + "/" + mixInfo.file, frames: frames, sampleRate: options.sampleRate,
            musicSeconds: Double(musicFrames) / rate, tailSeconds: Double(frames - musicFrames) / rate,
            peak: mixLevel.peak, loudness: mixInfo.loudness, truePeak: mixInfo.truePeak,
            samplesOverFullScale: mixLevel.samplesOverFullScale
        )
        summary.warnings = warnings ?? []
        return (summary.encoded(options.encoding), [mixInfo] + stems)
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
