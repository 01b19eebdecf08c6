import AudioGraph
import Synchronization

/// A stereo chorus node with FluidSynth's chorus (``Chorus``) inside: the input (mono, or the
/// average of its two channels) goes through the chorus, and the chorus's stereo output is added
/// to the input, as a synthesizer adds its chorus to the dry signal. Its defaults are FluidSynth's
/// (3 voices, level 2, 0.3 Hz, 8 ms, a sine).
///
/// Settings set from the control thread apply at the start of the next quantum; the sweep goes
/// on. It is not (yet) one of the `--fx` effects.
///
/// ```swift
/// let chorus = ChorusNode(settings: Chorus.Settings(voiceCount: 4, depth: 6))
/// ```
public final class ChorusNode: AudioNode, @unchecked Sendable {
    /// The chorus's settings; a change applies at the start of the next quantum.
    public var settings: Chorus.Settings {
        get {
            Chorus.Settings(
                voiceCount: voiceCount.load(ordering: .relaxed),
                level: Double(bitPattern: level.load(ordering: .relaxed)),
                speed: Double(bitPattern: speed.load(ordering: .relaxed)),
                depth: Double(bitPattern: depth.load(ordering: .relaxed)),
                waveform: waveform.load(ordering: .relaxed) == 0 ? .sine : .triangle)
        }
        set {
            voiceCount.store(newValue.voiceCount, ordering: .relaxed)
            level.store(newValue.level.bitPattern, ordering: .relaxed)
            speed.store(newValue.speed.bitPattern, ordering: .relaxed)
            depth.store(newValue.depth.bitPattern, ordering: .relaxed)
            waveform.store(newValue.waveform == .sine ? 0 : 1, ordering: .relaxed)
        }
    }

    // The settings as atomics, read once per quantum.
    private let voiceCount = Atomic<Int>(3)
    private let level = Atomic<UInt64>(0)
    private let speed = Atomic<UInt64>(0)
    private let depth = Atomic<UInt64>(0)
    private let waveform = Atomic<Int>(0)
    // Render state, made in prepare.
    private var chorus: Chorus?
    private var mono = RealTimeBuffer<Float>(capacity: 1)

    /// A chorus node named "chorus" with `settings` (FluidSynth's defaults unless given).
    public init(settings: Chorus.Settings = .init()) {
        super.init(name: "chorus")
        self.settings = settings
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        chorus = Chorus(sampleRate: format.sampleRate, settings: settings)
        mono = RealTimeBuffer(capacity: max(1, maximumFrameCount))
    }

    public override func reset() { chorus?.reset() }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0], let chorus else {
            output.clear(frames: frameCount)
            return
        }
        let wanted = settings
        if wanted != chorus.settings { chorus.update(wanted) }
        let left = input.channel(0)
        let right = input.channel(min(1, input.channelCount - 1))
        let outLeft = output.channel(0)
        let outRight = output.channel(min(1, output.channelCount - 1))
        let send = mono.base
        for frame in 0..<frameCount { send[frame] = (left[frame] + right[frame]) * 0.5 }
        outLeft.update(from: left, count: frameCount)
        if output.channelCount > 1 { outRight.update(from: right, count: frameCount) }
        chorus.process(send, left: outLeft, right: outRight, count: frameCount)
    }
}
