import AudioFiles
import AudioGraph
import Dispatch
import Effects
import MIDICore
import Meters
import PianolaSupport
import SMF
import Sampler
import Sequencer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Renders MIDI files to audio files faster than real time: a sampler with one SoundFont, the
/// music player, the engine in manual rendering mode, and a streaming writer that only gives the
/// output its final name once the render is complete.
///
/// With `threads` above 1 a song's channels are split over that many synthesizers (balanced by
/// how much each channel plays), each rendered on its own thread, and their outputs summed; the
/// sum is the same music as one synthesizer's render, as FluidSynth's voices, reverb and chorus
/// are linear. A song whose playing is on one channel, or too unevenly spread, uses FluidSynth's
/// own multi-core voice rendering instead.
///
/// One renderer holds its loaded SoundFonts (one copy in memory); reuse it for many files.
public final class OfflineRenderer: Sendable {
    /// How this renderer renders every file (a renderer sharing another's SoundFonts has its own).
    public let options: RenderOptions
    /// The SoundFonts, in the order they were stacked (the last one's presets come first).
    public let soundFontPaths: [String]
    /// The fonts, shared with the renderers made from this one.
    let fonts: FontStack

    /// A renderer with the SoundFonts at `paths` stacked: a preset of a later font hides the same
    /// bank and program of an earlier one (a drum kit over a General MIDI bank, say). Loading
    /// whole (`options.sampleLoading`), every sample is read now; on demand, the fonts are
    /// checked now and each render reads the samples its song plays.
    ///
    /// - Throws: `SoundFontError.notFound(path: "")` when `paths` is empty: with no SoundFont,
    ///   every render would be silence. Else the error of a font that cannot be loaded.
    public init(soundFonts paths: [String], options: RenderOptions = RenderOptions()) throws(SoundFontError) {
        guard !paths.isEmpty else { throw .notFound(path: "") }
        self.options = options
        soundFontPaths = paths
        fonts = FontStack(paths: paths, sampleRate: options.sampleRate)
        if options.engine == .native {
            // One font, its structure read now; loading whole, every sample too.
            _ = try options.sampleLoading == .whole ? fonts.voiceFont(presets: nil).bank : fonts.voiceBank()
        } else if options.sampleLoading == .whole {
            _ = try fonts.holder(.whole)
        } else {
            try fonts.check()
        }
    }

    /// A renderer with one SoundFont.
    public convenience init(soundFont path: String, options: RenderOptions = RenderOptions()) throws(SoundFontError) {
        try self.init(soundFonts: [path], options: options)
    }

    /// A renderer that shares `other`'s loaded SoundFonts (one copy in memory for both), with
    /// its own options: for rendering several files at once on several threads.
    public init(sharingSoundFontOf other: OfflineRenderer, options: RenderOptions? = nil) {
        self.options = options ?? other.options
        soundFontPaths = other.soundFontPaths
        fonts = other.fonts
    }

    /// FluidSynth's player timing plays from the start at speed 1 (and so without a varispeed or
    /// time-pitch that would need the player to run at their rate).
    func checkTiming() throws(RenderError) {
        try checkNativeEngine()
        guard options.timing == .exact || (options.pace == 1 && options.startSeconds == 0) else {
            throw .graph(
                "FluidSynth's player timing plays from the start at speed 1: no start, speed or rate effect with it")
        }
    }

    /// Refuses, before anything is written, a file with no notes, a start at or past the music's
    /// end, music longer than `options.maximumSeconds`, a folder on
    /// a read-only file system, and an output larger than the free space where it goes: the music
    /// and the tail asked for (a fixed one, or a few seconds of an automatic one), uncompressed,
    /// FLAC counted at half, Ogg at a tenth, MP3 and Opus at a quarter (their highest bit rates). A render that outgrows the estimate and fills the
    /// disk still stops cleanly, writing nothing.
    func checkSize(
        of sequence: MusicSequence, writingTo path: String, encoding: AudioFile.Encoding, channelCount: Int = 2
    )
        throws(RenderError)
    {
        guard sequence.tracks.contains(where: { $0.events.contains(where: \.message.isNoteStart) }) else {
            throw .noMusic
        }
        if options.startSeconds > 0 && options.startSeconds >= sequence.durationSeconds {
            throw .startPastEnd(start: options.startSeconds, length: sequence.durationSeconds)
        }
        let music = max(0, sequence.durationSeconds - options.startSeconds) / max(options.pace, 0.01)
        guard music <= options.maximumSeconds else { throw .tooLong(seconds: music, limit: options.maximumSeconds) }
        let folder = POSIXSupport.folder(of: path)
        if FileSystemSpace.isReadOnly(folder) {
            throw .cannotWrite(path: path, reason: "the file system there is read-only")
        }
        let bytesPerFrame = (encoding == .s16 ? 2 : encoding == .s24 ? 3 : 4) * channelCount
        let share: Double
        switch try? AudioFile.FileType(path: path) {
        case .flac: share = 0.5
        case .ogg: share = 0.1
        case .mp3, .opus: share = 0.25
        default: share = 1
        }
        let needed = Int(Double(options.expectedFrameCount(for: sequence) * bytesPerFrame) * share)
        // An unreachable folder fails at opening, by name.
        guard let available = FileSystemSpace.availableBytes(in: folder) else { return }
        guard needed <= available else { throw .notEnoughSpace(path: path, needed: needed, available: available) }
    }

    /// Runs `body`, which renders into `writers`, then finishes their files. On any failure every
    /// file is cancelled (nothing is left under its name) and the failure is a `RenderError`.
    static func completing(_ writers: [AudioFileWriter], _ body: () throws -> Void) throws(RenderError) {
        do {
            try body()
            for writer in writers { try writer.finish() }
        } catch {
            for writer in writers { writer.cancel() }
            switch error {
            case let error as RenderError: throw error
            case let error as AudioFileError: throw .audio(error)
            default: throw .graph("\(error)")
            }
        }
    }

    /// Serializes the voice probes on font owners (renderers on several threads share one).
    private static let probing = Mutex(())

    static func samplerSettings(_ options: RenderOptions) -> SamplerNode.Settings {
        var settings = SamplerNode.Settings()
        settings.sampleRate = options.sampleRate
        settings.polyphony = options.polyphony
        settings.isReverbEnabled = options.isSynthReverbEnabled
        settings.isChorusEnabled = options.isSynthChorusEnabled
        settings.interpolation = options.interpolation
        settings.programOverrides = options.programOverrides
        settings.mutedChannels = options.mutedChannels
        settings.sampleLoading = options.sampleLoading
        // FluidSynth's player hands a block's events to the synthesizer inside the block.
        settings.takesEventsAsFluidSynthPlayer = options.timing == .fluidSynth
        return settings
    }

    /// How the song's channels are shared out between synthesizers; nil renders with one.
    private func channelSplit(for sequence: MusicSequence, usage: PresetUsage?) throws(RenderError) -> [Set<Int>]? {
        guard options.threads > 1 else { return nil }
        // The voices each note starts are asked of a synthesizer holding the font (it is not
        // rendering; the render moves the font to fresh ones). Loading on demand, it holds the
        // song's samples (already read by the first lane) while it answers.
        let probe: SamplerNode
        do {
            probe = try fonts.holder(options.sampleLoading)
            if let usage { try probe.loadSamples(for: usage, threads: 0) }
        } catch {
            throw .soundFont(error)
        }
        defer { if let usage { probe.unloadSamples(for: usage) } }
        return ChannelSplit.plan(for: sequence, parts: options.threads) { channel, bank, program, key, velocity in
            probe.voiceShapes(forNote: key, velocity: velocity, bank: bank, program: program, onChannel: channel)
        }
    }

    /// A pristine synthesizer playing the fonts, with the presets `sequence` plays: sharing the
    /// holder's whole fonts, or loading them on demand with the song's samples (read by helper
    /// threads the first time, found in FluidSynth's sample cache by later samplers). Returns
    /// the usage too (nil when loading whole), for the samplers that follow.
    func makeSampler(
        settings: SamplerNode.Settings, for sequence: MusicSequence, usage known: PresetUsage? = nil
    ) throws(RenderError) -> (SamplerNode, PresetUsage?) {
        do {
            guard options.sampleLoading == .onDemand else {
                return (try SamplerNode(settings: settings, sharingSoundFontsWith: fonts.holder(.whole)), nil)
            }
            let sampler = try SamplerNode(settings: settings)
            // Its presets only: the song's zones are read by `loadSamples(narrowing:)`.
            for path in soundFontPaths { try sampler.loadSoundFont(at: path, presetsOnly: true) }
            let usage: PresetUsage
            if let known {
                usage = known
            } else {
                usage = try sampler.presetUsage(of: sequence, transposedBy: options.transpose)
            }
            try sampler.loadSamples(for: usage, threads: known == nil ? nil : 0, narrowing: true)
            return (sampler, usage)
        } catch {
            throw .soundFont(error)
        }
    }

    /// Renders `file` to `outputPath`. `progress` receives (seconds rendered, music seconds) as
    /// the render goes and returns false to cancel.
    public func render(
        _ file: MIDIFile, to outputPath: String, progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        try render(MusicSequence(file: file), to: outputPath, progress: progress)
    }

    /// Renders `sequence` to `outputPath`, through `effects` (nodes made in code, for this render
    /// only) when given, else through the options' effect specs. Specs that change the pace
    /// (`varispeed`, `timepitch`) apply to everything before them: the song plays faster or slower
    /// as well as higher or lower, as `pianola process` would make of the plain render.
    public func render(
        _ sequence: MusicSequence, to outputPath: String, effects: [AudioNode]? = nil,
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        let sequence = options.excerpt(of: sequence)
        let changesPace = effects == nil && options.effects.contains { $0.changesRate }
        var effectNodes = effects ?? []
        if effects == nil && !changesPace {
            do { effectNodes = try EffectChain.makeNodes(options.effects, songTempo: sequence.startingTempo) } catch {
                throw .graph(error.description)
            }
        }
        func produce(_ path: String, _ encoding: AudioFile.Encoding) throws(RenderError) -> RenderSummary {
            changesPace
                ? try renderChangingPace(sequence, to: path, encoding: encoding, progress: progress)
                : try synthesize(sequence, effects: effectNodes, to: path, encoding: encoding, progress: progress)
        }
        guard let target = options.loudness else { return try produce(outputPath, options.encoding) }
        // Loudness: the mix goes to a float file first, then is measured, scaled and (if its
        // peaks need it) limited into the output.
        let intermediate = Self.hiddenPath(beside: outputPath, tag: "unnormalized")
        defer { unlink(intermediate) }
        var summary = try produce(intermediate, .f32)
        let measured = try LoudnessNormalizer.normalize(
            intermediate, to: outputPath, target: target, encoding: options.encoding, dither: options.dither,
            compression: options.compression)
        summary.outputPath = outputPath
        summary.encoding = options.encoding
        summary.loudness = measured.loudness
        summary.truePeak = measured.truePeak
        summary.peak = measured.peak
        summary.samplesOverFullScale = measured.samplesOverFullScale
        return summary
    }

    /// A name in `path`'s folder for an intermediate file of the render (hidden, and marked with
    /// `tag` and the process), removed when the render ends.
    static func hiddenPath(beside path: String, tag: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return folder + ".\(name).\(tag)-\(getpid()).wav"
    }

    /// Renders `sequence` through `effects` into a file at `outputPath`: checks it, sets up a lane
    /// per synthesizer (`makeLanes`), the writer and the effect chain, then renders chunk by chunk
    /// until the music and its tail are done (`writeQuanta`).
    private func synthesize(
        _ sequence: MusicSequence, effects: [AudioNode], to outputPath: String, encoding: AudioFile.Encoding,
        progress: (Double, Double) -> Bool
    ) throws(RenderError) -> RenderSummary {
        try checkTiming()
        try checkSize(of: sequence, writingTo: outputPath, encoding: encoding)
        let rate = options.sampleRate
        let quantum = options.quantumFrames
        // Every file starts from pristine synthesizers (reverb, chorus and LFO state would
        // otherwise carry over from the previous file); they share the loaded SoundFont, or,
        // loading on demand, the samples this song needs, read first.
        let lanes: [RenderLane]
        var warnings: [String] = []
        if options.engine == .native {
            lanes = try makeNativeLanes(for: sequence)
        } else {
            var settings = Self.samplerSettings(options)
            // Rendering alone it uses FluidSynth's cores; with a split it only holds the samples.
            settings.cpuCores = options.threads
            let (firstSampler, usage) = try makeSampler(settings: settings, for: sequence)
            // The probe plays notes on the shared font holder: one renderer at a time.
            let split = try Self.probing.withLock { _ throws(RenderError) in
                try channelSplit(for: sequence, usage: usage)
            }
            lanes = try makeLanes(
                for: sequence, split: split, settings: settings, firstSampler: firstSampler, usage: usage)
            warnings = firstSampler.sampleWarnings
        }

        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: outputPath, sampleRate: options.sampleRate, encoding: encoding,
                expectedFrameCount: options.maximumFrameCount(for: sequence), dither: options.dither,
                compression: options.compression)
        } catch {
            throw .audio(error)
        }
        // One synthesizer renders quantum by quantum; several exchange larger chunks so that
        // their threads rarely wait for each other.
        let quantaPerChunk = lanes.count > 1 ? 16 : 1
        let chunk = RenderChunk(quantumFrames: quantum, quantumCount: quantaPerChunk)
        let workers = lanes.dropFirst().map {
            LaneWorker(lane: $0, quantumFrames: quantum, quantumCount: quantaPerChunk)
        }
        let chain: EffectChain?
        do {
            chain =
                effects.isEmpty
                ? nil
                : try EffectChain(
                    nodes: effects, sampleRate: rate, channelCount: 2, maximumFrameCount: quantum * quantaPerChunk)
        } catch {
            throw .graph(error.description)
        }
        for lane in lanes { lane.player.play() }
        for worker in workers { worker.start() }
        defer { for worker in workers { worker.stop() } }

        let meter: PeakAndLoudnessMeter
        do {
            meter = try PeakAndLoudnessMeter(sampleRate: options.sampleRate, measuresLoudness: options.measuresLoudness)
        } catch { throw .meter(error) }
        var position = RenderPosition(latency: chain?.latency ?? 0)
        let music = options.musicSeconds(of: sequence)
        try Self.completing([writer]) {
            while true {
                lanes[0].render(into: chunk)
                for worker in workers {
                    chunk.add(worker.nextChunk())
                    worker.releaseChunk()
                }
                chain?.process(chunk.audio, frameCount: quantum * quantaPerChunk)
                let isDone = try writeQuanta(of: chunk, to: writer, meter: meter, chain: chain, position: &position)
                if isDone { break }
                if !progress(Double(position.frames) / rate, music) { throw RenderError.cancelled }
            }
        }
        let (frames, musicFrames, latency) = (position.frames, position.musicFrames, position.latency)
        var summary = RenderSummary(
            outputPath: outputPath, frames: frames - latency, sampleRate: options.sampleRate,
            musicSeconds: Double(musicFrames) / rate,
            tailSeconds: Double(frames - latency - musicFrames) / rate, peak: meter.peak,
            loudness: meter.integratedLoudness, samplesOverFullScale: meter.samplesOverFullScale
        )
        summary.warnings = warnings
        return summary.encoded(encoding)
    }

    /// One lane per synthesizer: with a channel `split`, a fresh sampler for each part, playing
    /// its channels only; without one, `firstSampler` playing the whole song.
    private func makeLanes(
        for sequence: MusicSequence, split: [Set<Int>]?, settings: SamplerNode.Settings, firstSampler: SamplerNode,
        usage: PresetUsage?
    ) throws(RenderError) -> [RenderLane] {
        var settings = settings
        let laneChannels: [Set<Int>?] = split ?? [nil]
        var lanes: [RenderLane] = []
        for (index, channels) in laneChannels.enumerated() {
            settings.cpuCores = split == nil ? options.threads : 1
            do {
                let sampler =
                    index == 0 && split == nil
                    ? firstSampler : try makeSampler(settings: settings, for: sequence, usage: usage).0
                let laneSequence = channels.map { sequence.keepingChannels(Set($0.map { UInt8($0) })) } ?? sequence
                lanes.append(try RenderLane(sampler: sampler, sequence: laneSequence, options: options))
            } catch {
                throw .graph("\(error)")
            }
        }
        return lanes
    }

    /// Where a render stands, quantum by quantum: the frames rendered, where the music ended, and
    /// the effect chain's latency (a limiter's look-ahead), which comes off the start of the file
    /// and is rendered again at the end, so that the output stays aligned with the music.
    struct RenderPosition {
        /// The chain's latency, in frames.
        let latency: Int
        /// Frames of latency still to take off the start.
        var skipping: Int
        /// Once the music and its tail are done: the chain's delayed last frames still to write.
        var draining: Int?
        /// Frames rendered so far: the skipped ones included, and the drained ones too in
        /// `synthesize` (not in `renderStems`, whose stems have none).
        var frames = 0
        /// `frames` when the music last played: the rest is tail.
        var musicFrames = 0
        /// The tail's quiet frames so far (see `RenderOptions.tailIsDone`).
        var quietFrames = 0

        init(latency: Int) {
            self.latency = latency
            skipping = latency
        }
    }

    /// Writes the quanta of a rendered `chunk` (after the effect chain) to `writer` and `meter`,
    /// the latency skipped at the start and drained at the end, and moves `position` on; true
    /// once the render is done (the music, its tail and the drained latency are written).
    private func writeQuanta(
        of chunk: RenderChunk, to writer: AudioFileWriter, meter: PeakAndLoudnessMeter, chain: EffectChain?,
        position: inout RenderPosition
    ) throws -> Bool {
        let quantum = options.quantumFrames
        for index in 0..<chunk.quantumCount {
            let start = index * quantum
            var quantumPeak: Float = 0
            for channel in 0..<2 {
                let samples = chunk.audio.channel(channel) + start
                for frame in 0..<quantum { quantumPeak = max(quantumPeak, abs(samples[frame])) }
            }
            let skip = min(position.skipping, quantum)
            position.skipping -= skip
            if let left = position.draining {
                // After the end: only the chain's delayed last frames.
                let count = min(left, quantum)
                try writer.write(chunk.audio, from: start, frameCount: count)
                meter.add(chunk.audio, from: start, frameCount: count, peak: quantumPeak)
                position.frames += count
                position.draining = left - count
                if left - count == 0 { return true }
                continue
            }
            if skip < quantum {
                try writer.write(chunk.audio, from: start + skip, frameCount: quantum - skip)
                meter.add(chunk.audio, from: start + skip, frameCount: quantum - skip, peak: quantumPeak)
            }
            position.frames += quantum
            if !chunk.isFinished[index] {
                position.musicFrames = position.frames
                continue
            }
            let tailIsDone = options.tailIsDone(
                tailFrames: position.frames - position.musicFrames, quantum: quantum, peak: quantumPeak,
                voices: chunk.voiceCounts[index], quietFrames: &position.quietFrames,
                echoFrames: Int((chain?.longestEcho ?? 0) * options.sampleRate))
            if tailIsDone {
                if position.latency == 0 { return true }
                position.draining = position.latency
            }
        }
        return false
    }
}
