import AudioGraph
import AudioIO
import Effects
import SMF
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// How a render is split into stems.
public enum StemMode: String, CaseIterable, Sendable {
    /// One stem per track that plays notes.
    case track
    /// One stem per MIDI channel that plays notes.
    case channel
    /// One stem per General MIDI instrument family (piano, organ, guitar, …; drums apart), by the
    /// channel's program when each note starts.
    case program
}

/// One stem file and what it holds.
public struct StemInfo: Sendable {
    /// The file name (in the stems folder).
    public var file: String
    /// "mix", "track", "channel" or "family".
    public var kind: String
    public var name: String
    public var tracks: [Int]
    public var trackNames: [String]
    /// 1-based, as musicians count them.
    public var channels: [Int]
    public var programs: [Int]
    public var family: String?
    public var notes: Int
    /// Integrated loudness (LUFS) and true peak (dBTP), by libebur128.
    public var loudness: Double
    public var truePeak: Double
}

/// The General MIDI instrument families (program / 8).
public let generalMIDIFamilies = [
    "piano", "chromatic percussion", "organ", "guitar", "bass", "strings", "ensemble", "brass", "reed", "pipe",
    "synth lead", "synth pad", "synth effects", "ethnic", "percussive", "sound effects",
]

extension OfflineRenderer {
    /// Renders `file` into stems and their mix in one pass: one synthesizer per stem, all sharing
    /// the loaded SoundFont, the mix being their sum (the effects, if any, act on the mix only;
    /// stems stay dry). Writes `folder/mix.EXT`, one file per stem, and returns what each holds.
    /// Every file has the same length and starts on the same frame.
    public func renderStems(
        _ file: MIDIFile, toFolder folder: String, mode: StemMode, fileExtension: String = "wav",
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> (mix: RenderSummary, stems: [StemInfo]) {
        let sequence = MusicSequence(file: file)
        let plan = Self.stemPlan(sequence, mode: mode, fileExtension: fileExtension)
        guard !plan.isEmpty else { throw .graph("the file plays no notes: there is nothing to split") }
        let rate = Double(options.sampleRate)
        let quantum = options.quantumFrames
        var lanes: [RenderLane] = []
        for stem in plan {
            do {
                let sampler = try SamplerNode(settings: Self.samplerSettings(options), sharingSoundFontsWith: fontOwner)
                lanes.append(try RenderLane(sampler: sampler, sequence: stem.sequence, options: options))
            } catch {
                throw .graph("\(error)")
            }
        }
        var writers: [AudioFileWriter] = []
        var meters: [LoudnessMeter] = []
        do {
            for stem in plan + [(info: Self.mixInfo(fileExtension, plan), sequence: sequence)] {
                writers.append(
                    try AudioFileWriter(
                        path: folder + "/" + stem.info.file, sampleRate: options.sampleRate,
                        encoding: options.encoding))
                meters.append(try LoudnessMeter(channelCount: 2, sampleRate: options.sampleRate))
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
                : try EffectChain(options.effects, sampleRate: rate, channelCount: 2, maximumFrameCount: quantum)
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
        var peak: Float = 0
        let mixWriter = writers[plan.count]
        let mixMeter = meters[plan.count]
        do {
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
                }
                for worker in workers { worker.releaseChunk() }
                chain?.process(mix.audio, frameCount: quantum)
                var quantumPeak: Float = 0
                for channel in 0..<2 {
                    let samples = mix.audio.channel(channel)
                    for frame in 0..<quantum { quantumPeak = max(quantumPeak, abs(samples[frame])) }
                }
                peak = max(peak, quantumPeak)
                // The mix, its chain's latency taken off the start and rendered past the end.
                let skip = min(skipping, quantum)
                skipping -= skip
                var count = quantum - skip
                if let left = draining { count = min(left, quantum) }
                if count > 0 {
                    try mixWriter.write(mix.audio, from: skip, frameCount: count)
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
                        voices: mix.voiceCounts[0], quietFrames: &quietFrames)
                    if tailIsDone {
                        if latency == 0 { break rendering }
                        draining = latency
                    }
                }
                if !progress(Double(frames) / rate, sequence.durationSeconds) { throw RenderError.cancelled }
            }
            for writer in writers { try writer.finish() }
        } catch let error as RenderError {
            for writer in writers { writer.cancel() }
            throw error
        } catch let error as AudioFileError {
            for writer in writers { writer.cancel() }
            throw .audio(error)
        } catch {
            for writer in writers { writer.cancel() }
            throw .graph("\(error)")
        }
        var stems = plan.map(\.info)
        for index in stems.indices {
            stems[index].loudness = meters[index].integratedLoudness
            stems[index].truePeak = meters[index].truePeak
        }
        var mixInfo = Self.mixInfo(fileExtension, plan)
        mixInfo.loudness = mixMeter.integratedLoudness
        mixInfo.truePeak = mixMeter.truePeak
        let summary = RenderSummary(
            outputPath: folder + "/" + mixInfo.file, frames: frames, sampleRate: options.sampleRate,
            musicSeconds: Double(musicFrames) / rate, tailSeconds: Double(frames - musicFrames) / rate, peak: peak,
            loudness: mixInfo.loudness, truePeak: mixInfo.truePeak)
        return (summary, [mixInfo] + stems)
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

    /// The stems a sequence splits into, each with the sequence its synthesizer plays.
    static func stemPlan(
        _ sequence: MusicSequence, mode: StemMode, fileExtension: String
    ) -> [(
        info: StemInfo, sequence: MusicSequence
    )] {
        // Every note once, with its stem key.
        var notes: [(key: Int, context: MusicSequence.NoteContext)] = []
        _ = sequence.keepingNotes { context in
            let key: Int
            switch mode {
            case .track: key = context.track
            case .channel: key = context.channel
            case .program: key = context.channel == 9 ? 16 : context.program / 8
            }
            notes.append((key, context))
            return false
        }
        var plan: [(info: StemInfo, sequence: MusicSequence)] = []
        for key in Set(notes.map(\.key)).sorted() {
            let mine = notes.filter { $0.key == key }.map(\.context)
            let tracks = Array(Set(mine.map(\.track))).sorted()
            let trackNames = tracks.compactMap { sequence.tracks[$0].name }.filter { !$0.isEmpty }
            let channels = Array(Set(mine.map { $0.channel + 1 })).sorted()
            let programs = Array(Set(mine.map(\.program))).sorted()
            let name: String
            let kind: String
            var family: String?
            switch mode {
            case .track:
                kind = "track"
                name = trackNames.first ?? "track \(key + 1)"
            case .channel:
                kind = "channel"
                name = "channel \(key + 1)"
            case .program:
                kind = "family"
                name = key == 16 ? "drums" : generalMIDIFamilies[key]
                family = name
            }
            if mode != .program, channels.count == 1 {
                family = channels == [10] ? "drums" : programs.count == 1 ? generalMIDIFamilies[programs[0] / 8] : nil
            }
            let stem = String(format2: key + 1)
            let slug = safeName(name)
            let file: String
            switch mode {
            case .track: file = "track-\(stem)-\(slug).\(fileExtension)"
            case .channel: file = "channel-\(stem).\(fileExtension)"
            case .program: file = "\(slug).\(fileExtension)"
            }
            let info = StemInfo(
                file: file, kind: kind, name: name, tracks: tracks, trackNames: trackNames, channels: channels,
                programs: programs, family: family, notes: mine.count, loudness: -.infinity, truePeak: -.infinity)
            let filtered = sequence.keepingNotes { context in
                switch mode {
                case .track: return context.track == key
                case .channel: return context.channel == key
                case .program: return (context.channel == 9 ? 16 : context.program / 8) == key
                }
            }
            plan.append((info, filtered))
        }
        return plan
    }

    /// Letters, digits and dashes.
    static func safeName(_ name: String) -> String {
        let mapped = name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let collapsed = String(mapped).split(separator: "-").joined(separator: "-")
        return collapsed.isEmpty ? "stem" : String(collapsed.prefix(40))
    }
}

extension String {
    /// Two digits at least.
    init(format2 value: Int) { self = value < 10 ? "0\(value)" : "\(value)" }
}
