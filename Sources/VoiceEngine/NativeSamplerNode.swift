import AudioGraph
import Effects
import MIDICore
import SoundFontFiles
import Synchronization

/// A sampler node played by Pianola's own voice engine (``VoiceSynthesizer``) instead of
/// FluidSynth: it takes MIDI like `SamplerNode`, so the graph, the sequencer and live input do not
/// care which engine plays, and it starts every note on the exact frame it is given.
///
/// As FluidSynth does, it runs the voices' mono reverb and chorus sends through a reverb
/// (``SynthReverb``) and a chorus (``Chorus``) with FluidSynth's default settings, and adds their
/// stereo outputs into the dry signal. Both are on by default (`VoiceSynthesizer.Settings`'s
/// `isReverbEnabled` and `isChorusEnabled`); ``isReverbEnabled`` and ``isChorusEnabled`` switch
/// them while the node plays.
public final class NativeSamplerNode: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    private let synthesizer: VoiceSynthesizer
    private var reverb: [Float] = []
    private var chorus: [Float] = []
    private let reverbProcessor: SynthReverb
    private let chorusProcessor: Chorus
    private let reverbSetting: Atomic<Bool>
    private let chorusSetting: Atomic<Bool>
    /// What the effects did in the last quantum (render thread): a switched-on effect starts from silence.
    private var reverbRan: Bool
    private var chorusRan: Bool
    private let voices = Atomic<Int>(0)
    private var hasBank = false

    /// A node with no bank loaded, rendering at `settings.sampleRate`, its sends going through a
    /// reverb with `reverb` and a chorus with `chorus` (FluidSynth's defaults unless given).
    public init(
        name: String = "Native sampler", settings: VoiceSynthesizer.Settings = .init(),
        reverb: SynthReverb.Settings = .init(), chorus: Chorus.Settings = .init()
    ) {
        synthesizer = VoiceSynthesizer(settings: settings)
        reverbProcessor = SynthReverb(sampleRate: settings.sampleRate, settings: reverb)
        chorusProcessor = Chorus(sampleRate: settings.sampleRate, settings: chorus)
        reverbSetting = Atomic(settings.isReverbEnabled)
        chorusSetting = Atomic(settings.isChorusEnabled)
        reverbRan = settings.isReverbEnabled
        chorusRan = settings.isChorusEnabled
        super.init(name: name)
    }

    /// Whether the reverb send goes through the reverb (as FluidSynth's `synth.reverb.active`). A
    /// change applies at the start of the next quantum; switched off, the tail stops at once, and
    /// switched on again, the reverb starts from silence.
    public var isReverbEnabled: Bool {
        get { reverbSetting.load(ordering: .relaxed) }
        set { reverbSetting.store(newValue, ordering: .relaxed) }
    }

    /// Whether the chorus send goes through the chorus (as FluidSynth's `synth.chorus.active`). A
    /// change applies at the start of the next quantum, as ``isReverbEnabled``'s does.
    public var isChorusEnabled: Bool {
        get { chorusSetting.load(ordering: .relaxed) }
        set { chorusSetting.store(newValue, ordering: .relaxed) }
    }

    /// The reverb's settings.
    public var reverbSettings: SynthReverb.Settings { reverbProcessor.settings }

    /// The chorus's settings.
    public var chorusSettings: Chorus.Settings { chorusProcessor.settings }

    /// Loads `bank` and the samples of `presets` (nil: every preset's). Control thread, before
    /// the node renders.
    ///
    /// - Throws: ``SoundFontReadError`` when a sample cannot be read.
    public func load(_ bank: SoundFontBank, presets: [(bank: Int, program: Int)]? = nil) throws(SoundFontReadError) {
        try synthesizer.load(bank, presets: presets)
        hasBank = true
    }

    /// Plays `font`, shared with every other node or synthesizer given it (its samples are not
    /// copied). Control thread, before the node renders.
    public func load(_ font: VoiceFont) {
        synthesizer.load(font)
        hasBank = true
    }

    /// True once a bank is loaded.
    public var canPlayNotes: Bool { hasBank }

    /// The voices sounding at the end of the last quantum.
    public var activeVoiceCount: Int { voices.load(ordering: .relaxed) }

    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        guard format.sampleRate == synthesizer.settings.sampleRate else {
            throw AudioGraphError.formatMismatch(
                node: name, format: format,
                reason: "the native sampler renders at \(synthesizer.settings.sampleRate) Hz "
                    + "(VoiceSynthesizer.Settings.sampleRate)")
        }
        reverb = [Float](repeating: 0, count: maximumFrameCount)
        chorus = reverb
    }

    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        let event: VoiceSynthesizer.Event
        switch message {
        case .noteOn(let channel, let note, let velocity):
            event = .noteOn(channel: Int(channel), key: Int(note), velocity: Int(velocity))
        case .noteOff(let channel, let note, _):
            event = .noteOff(channel: Int(channel), key: Int(note))
        case .controlChange(let channel, let controller, let value):
            event = .controlChange(channel: Int(channel), controller: Int(controller), value: Int(value))
        case .programChange(let channel, let program):
            event = .programChange(channel: Int(channel), program: Int(program))
        case .pitchBend(let channel, let value):
            event = .pitchBend(channel: Int(channel), value: Int(value))
        case .channelPressure(let channel, let pressure):
            event = .channelPressure(channel: Int(channel), pressure: Int(pressure))
        case .polyphonicKeyPressure(let channel, let note, let pressure):
            event = .keyPressure(channel: Int(channel), key: Int(note), pressure: Int(pressure))
        case .systemReset:
            event = .reset
        default:
            return
        }
        synthesizer.send(event, atFrame: frameOffset)
    }

    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {}

    public func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int) {
        for channel in 0..<16 {
            synthesizer.send(.controlChange(channel: channel, controller: 123, value: 0), atFrame: frameOffset)
            if interruption == .relocated {
                synthesizer.send(.controlChange(channel: channel, controller: 121, value: 0), atFrame: frameOffset)
            }
        }
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        output.clear(frames: frameCount)
        let right = output.channelCount > 1 ? output.channel(1) : output.channel(0)
        reverb.withUnsafeMutableBufferPointer { reverb in
            chorus.withUnsafeMutableBufferPointer { chorus in
                for index in 0..<frameCount {
                    reverb[index] = 0
                    chorus[index] = 0
                }
                synthesizer.render(
                    frameCount: frameCount, left: output.channel(0), right: right, reverb: reverb.baseAddress!,
                    chorus: chorus.baseAddress!)
                // As FluidSynth: the reverb, then the chorus, each over its whole send, added into
                // the dry signal (a mono output gets both sides, as the dry signal does).
                let left = output.channel(0)
                let reverbOn = reverbSetting.load(ordering: .relaxed)
                if reverbOn {
                    if !reverbRan { reverbProcessor.reset() }
                    reverbProcessor.process(reverb.baseAddress!, left: left, right: right, count: frameCount)
                }
                reverbRan = reverbOn
                let chorusOn = chorusSetting.load(ordering: .relaxed)
                if chorusOn {
                    if !chorusRan { chorusProcessor.reset() }
                    chorusProcessor.process(chorus.baseAddress!, left: left, right: right, count: frameCount)
                }
                chorusRan = chorusOn
            }
        }
        voices.store(synthesizer.activeVoiceCount, ordering: .relaxed)
    }

    public override func reset() {
        synthesizer.send(.reset, atFrame: 0)
        reverbProcessor.reset()
        chorusProcessor.reset()
    }
}
