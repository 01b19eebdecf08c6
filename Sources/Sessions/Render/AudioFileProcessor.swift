import AudioGraph
import AudioIO
import Effects

/// Applies an effect chain to an audio file (WAV, FLAC, Ogg, AIFF): what `pianola process`
/// does. The chain's latency (a limiter's look-ahead) is taken off the start and the input is
/// followed by as much silence, so the output lines up with the input frame for frame; a
/// reverb's tail is kept. The output is written under a temporary name and renamed when complete.
public struct AudioFileProcessor: Sendable {
    /// What was written.
    public struct Result: Sendable, Hashable {
        /// The input's length (the output adds any effect tail).
        public var inputFrames: Int
        /// The input's sample rate in Hz, which the output keeps.
        public var sampleRate: Double
        /// The output's sample format: the one asked for, else the input's (s16 for a lossy input).
        public var encoding: AudioFile.Encoding
        /// The input's length in seconds.
        public var inputSeconds: Double { Double(inputFrames) / sampleRate }
    }

    /// The effect chain, in order.
    public var effects: [EffectSpec]

    /// A processor applying `effects`; each `process` builds the chain (and checks the specs) anew.
    public init(effects: [EffectSpec]) { self.effects = effects }

    /// Processes `input` into `output`. The output keeps the input's sample format unless
    /// `encoding` is given (16-bit for lossy inputs). `progress` receives (input seconds done,
    /// input seconds) and returns false to cancel.
    public func process(
        _ input: String, to output: String, encoding: AudioFile.Encoding? = nil,
        progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> Result {
        let audio: AudioFile.Buffer
        do { audio = try AudioFile.read(from: input) } catch { throw .audio(error) }
        let encoding = encoding ?? AudioFile.encoding(ofFileAt: input) ?? .s16
        let channels = max(1, audio.channelCount)
        let rate = audio.sampleRate
        let chain: EffectChain
        do { chain = try EffectChain(effects, sampleRate: rate, channelCount: channels) } catch {
            throw .graph(error.description)
        }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: output, sampleRate: audio.sampleRate, channelCount: channels, encoding: encoding,
                expectedFrameCount: audio.frameCount + chain.latency + Int(chain.tailSeconds * rate))
        } catch { throw .audio(error) }
        let block = 4_096
        let buffer = AudioBuffer(channelCount: channels, frameCapacity: block)
        let latency = chain.latency
        let total = audio.frameCount + latency + Int(chain.tailSeconds * rate)
        var position = 0
        while position < total {
            guard progress(Double(min(position, audio.frameCount)) / rate, Double(audio.frameCount) / rate) else {
                writer.cancel()
                throw .cancelled
            }
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
            do { try writer.write(buffer, from: skip, frameCount: count - skip) } catch {
                writer.cancel()
                throw .audio(error)
            }
            position += count
        }
        _ = progress(Double(audio.frameCount) / rate, Double(audio.frameCount) / rate)
        do { try writer.finish() } catch { throw .audio(error) }
        return Result(inputFrames: audio.frameCount, sampleRate: audio.sampleRate, encoding: encoding)
    }
}
