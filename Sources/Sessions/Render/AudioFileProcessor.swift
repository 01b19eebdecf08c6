import AudioFiles
import AudioGraph
import Effects
import Meters
import RateAndPitch

/// Applies an effect chain to an audio file (WAV, FLAC, Ogg, Opus, MP3, AIFF): what `pianola process`
/// does. The chain's latency (a limiter's look-ahead) is taken off the start and the input is
/// followed by as much silence, so the output lines up with the input frame for frame; a
/// reverb's tail is kept. A `varispeed` in the chain resamples everything before it (libsamplerate,
/// best quality) and a `timepitch` stretches it (SoundTouch): the output is 1/rate as long, and
/// the effects after it work on the result. The
/// output is written under a temporary name and renamed when complete.
public struct AudioFileProcessor: Sendable {
    /// What was written.
    public struct Result: Sendable, Hashable {
        /// The input's length (the output adds any effect tail, and a varispeed or time-pitch
        /// divides it by its rate).
        public var inputFrames: Int
        /// The input's sample rate in Hz, which the output keeps.
        public var sampleRate: Double
        /// The output's sample format: the one asked for, else the input's (s16 for a lossy input or
        /// output, where it means none).
        public var encoding: AudioFile.Encoding
        /// The input's length in seconds.
        public var inputSeconds: Double { Double(inputFrames) / sampleRate }
        /// The output's length.
        public var outputFrames = 0
        /// With `measuresOutput`: the output's peak, before any integer encoding clips it.
        public var peak: Float?
        /// With `measuresOutput`: the output's samples over full scale (they clip in an integer file).
        public var samplesOverFullScale: Int?
        /// With `measuresOutput`: the output's integrated loudness (LUFS; stereo outputs only).
        public var loudness: Double?
    }

    /// The effect chain, in order.
    public var effects: [EffectSpec]
    /// The tempo of the input's music in beats per minute, if it has one: a `delay` given a note
    /// value (and no `tempo`) follows it, as a varispeed or time-pitch before the delay changes it.
    public var songTempo: Double?
    /// Whether the result reports the output's peak, overs and loudness.
    public var measuresOutput = false
    /// Whether 16- and 24-bit output gets TPDF dither of ±1 step before rounding (without it,
    /// each sample is rounded to the nearest step).
    public var dither = false
    /// How much an MP3, Opus or Ogg Vorbis output is compressed (`automatic` for other outputs).
    public var compression: AudioFile.Compression = .automatic

    /// A processor applying `effects`; each `process` builds the chain (and checks the specs) anew.
    public init(effects: [EffectSpec]) { self.effects = effects }

    /// Processes `input` into `output`. The output keeps the input's sample format unless
    /// `encoding` is given (16-bit for lossy inputs; an MP3 or Opus output takes none, so only
    /// 16-bit, the default). An Opus or MP3 output at a rate it cannot hold is written at
    /// `AudioFile.FileType.fileSampleRate(for:)` (44.1 kHz into Opus at 48 kHz). `progress` receives (input seconds done,
    /// input seconds) and returns false to cancel.
    public func process(
        _ input: String, to output: String, encoding: AudioFile.Encoding? = nil,
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> Result {
        let audio: AudioFile.Buffer
        do { audio = try AudioFile.read(from: input) } catch { throw .audio(error) }
        let outputType: AudioFile.FileType
        do { outputType = try AudioFile.FileType(path: output) } catch { throw .audio(error) }
        let encoding = encoding ?? (outputType.isLossy ? nil : AudioFile.encoding(ofFileAt: input)) ?? .s16
        let channels = max(1, audio.channelCount)
        let rate = audio.sampleRate
        // The chains between the length-changing steps (varispeed, timepitch); all but the last run
        // into memory, and each step then resamples or stretches what came before it.
        var stages: [(chain: [EffectSpec], before: EffectSpec?)] = [([], nil)]
        for spec in effects {
            if ["varispeed", "timepitch"].contains(spec.name) {
                stages.append(([], spec))
            } else {
                stages[stages.count - 1].chain.append(spec)
            }
        }
        let seconds = Double(audio.frameCount) / rate
        var current = audio
        var tempo = songTempo
        var result = Result(inputFrames: audio.frameCount, sampleRate: audio.sampleRate, encoding: encoding)
        let meter: PeakAndLoudnessMeter?
        do {
            meter = try measuresOutput ? PeakAndLoudnessMeter(sampleRate: rate, measuresLoudness: channels == 2) : nil
        } catch { throw .meter(error) }
        for (index, stage) in stages.enumerated() {
            if let change = stage.before {
                guard progress(Double(index) / Double(stages.count) * seconds, seconds) else { throw .cancelled }
                do {
                    current =
                        change.name == "varispeed"
                        ? try current.varispeed(rate: change.varispeedRate)
                        : try TimePitch.process(
                            current, rate: change.value(of: "rate"), cents: change.value(of: "pitch"))
                } catch { throw .audio(error) }
                tempo = tempo.map { $0 * change.rateFactor }
            }
            let chain: EffectChain
            do {
                chain = try EffectChain(stage.chain, sampleRate: rate, channelCount: channels, songTempo: tempo)
            } catch {
                throw .graph(error.description)
            }
            let total = current.frameCount + chain.latency + Int(chain.tailSeconds * rate)
            let last = index == stages.count - 1
            // Progress in input seconds: the stages share the bar.
            let share = (Double(index) / Double(stages.count), 1 / Double(stages.count))
            let report = { (done: Int) in
                progress((share.0 + share.1 * Double(done) / Double(max(total, 1))) * seconds, seconds)
            }
            if last {
                let writer: AudioFileWriter
                do {
                    writer = try AudioFileWriter(
                        path: output, sampleRate: rate, channelCount: channels, encoding: encoding,
                        expectedFrameCount: total - chain.latency, dither: dither, compression: compression)
                } catch { throw .audio(error) }
                do {
                    try Self.run(chain, over: current, total: total, progress: report) { buffer, skip, count in
                        try writer.write(buffer, from: skip, frameCount: count)
                        result.outputFrames += count
                        meter?.add(buffer, from: skip, frameCount: count)
                    }
                } catch {
                    writer.cancel()
                    throw error
                }
                do { try writer.finish() } catch { throw .audio(error) }
            } else {
                var samples: [Float] = []
                samples.reserveCapacity((total - chain.latency) * channels)
                try Self.run(chain, over: current, total: total, progress: report) { buffer, skip, count in
                    for frame in skip..<(skip + count) {
                        for channel in 0..<channels { samples.append(buffer.channel(channel)[frame]) }
                    }
                }
                current = AudioFile.Buffer(samples: samples, channelCount: channels, sampleRate: rate)
            }
        }
        _ = progress(seconds, seconds)
        if let meter {
            (result.peak, result.samplesOverFullScale) = (meter.peak, meter.samplesOverFullScale)
            result.loudness = meter.integratedLoudness
        }
        return result
    }

    /// Runs `chain` over `audio` and `total` frames in all (the input, then silence for the latency
    /// and the tail), handing each block to `sink` without the first `latency` frames.
    private static func run(
        _ chain: EffectChain, over audio: AudioFile.Buffer, total: Int, progress: (Int) -> Bool,
        sink: (AudioBuffer, Int, Int) throws -> Void
    ) throws(RenderError) {
        let channels = max(1, audio.channelCount)
        let block = 4_096
        let buffer = AudioBuffer(channelCount: channels, frameCapacity: block)
        let latency = chain.latency
        var position = 0
        while position < total {
            guard progress(min(position, total)) else { throw .cancelled }
            let count = min(block, total - position)
            for channel in 0..<channels {
                let samples = buffer.channel(channel)
                for frame in 0..<count {
                    let index = position + frame
                    samples[frame] = index < audio.frameCount ? audio.samples[index * channels + channel] : 0
                }
            }
            chain.process(buffer, frameCount: count)
            let skip = max(0, min(count, latency - position))
            do { try sink(buffer, skip, count - skip) } catch let error as AudioFileError { throw .audio(error) } catch
            {
                throw .audio(.writeFailed(path: "", reason: "\(error)"))
            }
            position += count
        }
    }
}
