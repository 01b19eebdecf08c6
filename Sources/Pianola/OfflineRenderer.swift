import AudioGraph
import AudioIO
import MIDIFile
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// How `OfflineRenderer` renders.
public struct RenderOptions: Sendable, Hashable {
    /// How long to keep rendering after the last event.
    public enum Tail: Sendable, Hashable {
        /// Until the release and reverb tail falls below −90 dBFS (capped at `maximumTailSeconds`).
        case automatic
        case seconds(Double)
    }

    public var sampleRate = 44_100
    public var encoding: AudioFile.Encoding = .s16
    /// Output gain in dB, applied at the main mixer (FluidSynth's own gain stays at its default).
    public var gainDecibels = 0.0
    public var isSynthReverbEnabled = true
    public var isSynthChorusEnabled = true
    public var polyphony = 256
    /// Cores the synthesizer may use for one file (FluidSynth's multi-core voice rendering).
    public var threads = 1
    public var tail: Tail = .automatic
    public var maximumTailSeconds = 30.0
    /// Frames per render quantum. Events are placed at their exact frame whatever this is.
    public var quantumFrames = 1_024
    /// Event timing: sample-accurate (the default) or as FluidSynth's own player places them.
    public var timing: MusicPlayer.Timing = .sampleAccurate

    public init() {}

    /// The level under which the automatic tail ends.
    public static let silenceThreshold: Float = 3.162_277_7e-5  // −90 dBFS
}

/// What a finished render produced.
public struct RenderSummary: Sendable {
    public var outputPath: String
    public var frames: Int
    public var sampleRate: Int
    public var musicSeconds: Double
    public var tailSeconds: Double
    public var peak: Float
    public var seconds: Double { Double(frames) / Double(sampleRate) }
}

/// Why a render stopped early.
public enum RenderError: Error, Sendable, CustomStringConvertible {
    case cancelled
    case audio(AudioFileError)
    case graph(String)

    public var description: String {
        switch self {
        case .cancelled: return "interrupted; no output was written"
        case .audio(let error): return error.description
        case .graph(let reason): return reason
        }
    }
}

/// Renders MIDI files to audio files faster than real time: a sampler with one SoundFont, the
/// music player, the engine in manual rendering mode, and a streaming writer that only gives the
/// output its final name once the render is complete.
///
/// One renderer holds one synthesizer and its loaded SoundFont; reuse it for many files.
public final class OfflineRenderer {
    public let options: RenderOptions
    public let soundFontPath: String
    private var engine = AudioEngine()
    private var sampler: SamplerNode
    private var hasRendered = false

    public init(soundFont path: String, options: RenderOptions = RenderOptions()) throws(SoundFontError) {
        self.options = options
        soundFontPath = path
        var settings = SamplerNode.Settings()
        settings.sampleRate = Double(options.sampleRate)
        settings.polyphony = options.polyphony
        settings.cpuCores = options.threads
        settings.isReverbEnabled = options.isSynthReverbEnabled
        settings.isChorusEnabled = options.isSynthChorusEnabled
        sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: path)
    }

    /// Renders `file` to `outputPath`. `progress` receives (seconds rendered, music seconds) after
    /// each quantum and returns false to cancel.
    public func render(
        _ file: MIDIFile, to outputPath: String, progress: (Double, Double) -> Bool = { _, _ in true }
    ) throws(RenderError) -> RenderSummary {
        if hasRendered {
            // Every file starts from a pristine synthesizer (reverb, chorus and LFO state would
            // otherwise carry over from the previous file); the SoundFont moves, it is not reloaded.
            do {
                sampler = try SamplerNode(takingSoundFontsFrom: sampler)
            } catch {
                throw .graph("\(error)")
            }
            engine = AudioEngine()
        }
        hasRendered = true
        let sequence = MusicSequence(file: file)
        let rate = Double(options.sampleRate)
        let player = MusicPlayer(sequence: sequence, destination: sampler, sampleRate: rate, timing: options.timing)
        let quantum = options.quantumFrames
        do {
            if engine.inputBus(of: engine.mainMixerNode, connectedFrom: sampler) == nil {
                engine.attach(sampler)
                try engine.connect(sampler, to: engine.mainMixerNode)
            }
            try engine.addRenderObserver(player)
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: quantum)
        } catch {
            throw .graph("\(error)")
        }
        defer { try? engine.removeRenderObserver(player) }
        engine.mainMixerNode.outputVolume = Float(pow(10, options.gainDecibels / 20))

        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: outputPath, sampleRate: options.sampleRate, encoding: options.encoding)
        } catch {
            throw .audio(error)
        }
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
        player.play()
        var frames = 0
        var peak: Float = 0
        var musicFrames = 0
        var quietFrames = 0
        let music = sequence.durationSeconds
        let maximumTailFrames = Int(options.maximumTailSeconds * rate)
        do {
            while true {
                _ = engine.render(frameCount: quantum, into: buffer)
                var quantumPeak: Float = 0
                for channel in 0..<2 {
                    let samples = buffer.channel(channel)
                    for frame in 0..<quantum { quantumPeak = max(quantumPeak, abs(samples[frame])) }
                }
                peak = max(peak, quantumPeak)
                try writer.write(buffer, frameCount: quantum)
                frames += quantum
                if !player.isFinished {
                    musicFrames = frames
                } else {
                    let tailFrames = frames - musicFrames
                    let tailIsDone: Bool
                    switch options.tail {
                    case .seconds(let seconds):
                        tailIsDone = Double(tailFrames) >= seconds * rate
                    case .automatic:
                        quietFrames = quantumPeak < RenderOptions.silenceThreshold ? quietFrames + quantum : 0
                        let voicesDone = sampler.activeVoiceCount == 0 && quietFrames > 0
                        tailIsDone = voicesDone || quietFrames >= Int(2 * rate) || tailFrames >= maximumTailFrames
                    }
                    if tailIsDone { break }
                }
                if !progress(Double(frames) / rate, music) { throw RenderError.cancelled }
            }
            try writer.finish()
        } catch let error as RenderError {
            writer.cancel()
            throw error
        } catch let error as AudioFileError {
            writer.cancel()
            throw .audio(error)
        } catch {
            writer.cancel()
            throw .graph("\(error)")
        }
        return RenderSummary(
            outputPath: outputPath, frames: frames, sampleRate: options.sampleRate,
            musicSeconds: Double(musicFrames) / rate,
            tailSeconds: Double(frames - musicFrames) / rate, peak: peak)
    }
}
