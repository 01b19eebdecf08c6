import AudioGraph
// Times Pianola's effect nodes on a stereo signal read from a raw float32 file (interleaved, made
// planar before timing), in blocks of 512 frames, best of N runs; prints one JSON object per effect: nanoseconds per
// stereo frame. Run by Benchmarks/effects_benchmark.py, which times pedalboard on the same bytes.
//
//   effects-benchmark SIGNAL.f32 SAMPLE-RATE RUNS
//
// With --in-render, times the chain inside a render instead: the song is synthesized quantum by
// quantum (1024 frames, as `pianola render` does) and each quantum then goes through the chain
// (the --fx specs given), each step timed on its own, so that the two shares come from the same
// moments of a noisy machine and the chain runs in a render's cache state. Prints one JSON object.
//
//   effects-benchmark --in-render SONG.mid FONT.sf2 RUNS FX-SPEC...
//
// With --design-time, times the settled matched design (what a band computes on the audio thread
// once it stops gliding) over the test grid of every type at 48 kHz: prints one JSON object with the
// mean and the worst microseconds per design.
//
//   effects-benchmark --design-time
//
// With --timepitch, times the streaming time-pitch unit (a player through a `TimePitchNode`) on the
// signal at a rate and a pitch in cents: prints one JSON object, seconds per second of the signal.
//
//   effects-benchmark --timepitch SIGNAL.f32 SAMPLE-RATE RUNS RATE CENTS
import Effects
import Foundation
import SMF
import Sampler
import Sequencer

let arguments = CommandLine.arguments
if arguments.count == 2 && arguments[1] == "--design-time" {
    designTime()
    exit(0)
}
if arguments.count >= 5 && arguments[1] == "--in-render" {
    try inRender(song: arguments[2], font: arguments[3], runs: Int(arguments[4]) ?? 1, fx: Array(arguments[5...]))
    exit(0)
}
let timing = arguments.count == 7 && arguments[1] == "--timepitch"
let signal = Array(arguments.dropFirst(timing ? 2 : 1))
guard signal.count == (timing ? 5 : 3), let data = FileManager.default.contents(atPath: signal[0]),
    let rate = Double(signal[1]), let runs = Int(signal[2])
else {
    print("usage: effects-benchmark SIGNAL.f32 SAMPLE-RATE RUNS")
    print("       effects-benchmark --timepitch SIGNAL.f32 SAMPLE-RATE RUNS RATE CENTS")
    exit(2)
}
let interleaved = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
let frames = interleaved.count / 2
// Planar, as pedalboard is given it (outside the timing on both sides).
let planar = (0..<2).map { channel in (0..<frames).map { interleaved[2 * $0 + channel] } }
if timing {
    try timePitch(planar, rate: rate, runs: runs, stretch: Double(signal[3]) ?? 1, cents: Double(signal[4]) ?? 0)
    exit(0)
}
let block = 512

func eq4() -> EQNode {
    let eq = EQNode(numberOfBands: 4)
    let bands = [
        FilterBand(type: .lowShelf, frequency: 100, gain: 3),
        FilterBand(type: .parametric, frequency: 500, gain: -3, bandwidth: 1.39),
        FilterBand(type: .parametric, frequency: 3_000, gain: 2, bandwidth: 1.39),
        FilterBand(type: .highShelf, frequency: 8_000, gain: -3),
    ]
    for (band, settings) in zip(eq.bands, bands) {
        band.settings = settings
        band.bypass = false
    }
    return eq
}

func limiter(truePeak: Bool) -> LimiterNode {
    let node = LimiterNode()
    node.ceiling = -1
    node.attack = 5
    node.release = 100
    node.truePeak = truePeak
    return node
}

let cases: [(String, () -> [AudioNode])] = [
    ("biquad", { [FilterNode(type: .parametric, frequency: 1_000, gain: 6, bandwidth: 1.39)] }),
    ("eq4", { [eq4()] }),
    (
        "eq4Matched",
        {
            let eq = eq4()
            eq.design = .matched
            return [eq]
        }
    ),
    ("reverb", { [ReverbNode(preset: .mediumHall, wetDryMix: 33)] }),
    ("limiter", { [limiter(truePeak: false)] }),
    ("limiterTruePeak", { [limiter(truePeak: true)] }),
    ("chain", { [eq4(), ReverbNode(preset: .mediumHall, wetDryMix: 33), limiter(truePeak: false)] }),
    (
        "compressor",
        {
            let node = DynamicsProcessorNode()
            node.threshold = -20
            node.ratio = 4
            node.kneeWidth = 0
            node.attackTime = 10
            node.releaseTime = 100
            return [node]
        }
    ),
    ("delay", { [DelayNode(delayTime: 0.25, feedback: 40, lowPassCutoff: 96_000, wetDryMix: 30)] }),
    ("delayLowPass", { [DelayNode(delayTime: 0.25, feedback: 40, lowPassCutoff: 6_000, wetDryMix: 30)] }),
    ("distortion", { [distortion(oversampling: 8)] }),
    ("distortion4x", { [distortion(oversampling: 4)] }),
    ("distortion1x", { [distortion(oversampling: 1)] }),
    // The ring modulator at 8×: a multiply per sample between the same oversampling filters, so
    // nearly the filters' cost alone (the floor under any curve oversampled 8×).
    ("distortionRing8x", { [distortion(.ringModulator, oversampling: 8)] }),
]

/// tanh driven 25 dB (pedalboard's Distortion's curve), the tone off.
func distortion(_ shape: DistortionNode.Shape = .softClip, oversampling: Int) -> DistortionNode {
    let node = DistortionNode(shape: shape, drive: 25, tone: 96_000, wetDryMix: 100)
    node.oversampling = oversampling
    return node
}

let input = AudioBuffer(channelCount: 2, frameCapacity: block)
let output = AudioBuffer(channelCount: 2, frameCapacity: block)
for (name, make) in cases {
    var best = Double.infinity
    for _ in 0..<runs {
        let nodes = make()
        for node in nodes { try node.prepare(format: .stereo(sampleRate: rate), maximumFrameCount: block) }
        let start = DispatchTime.now().uptimeNanoseconds
        var position = 0
        while position < frames {
            let count = min(block, frames - position)
            for channel in 0..<2 {
                planar[channel].withUnsafeBufferPointer {
                    input.channel(channel).update(from: $0.baseAddress! + position, count: count)
                }
            }
            var source = input
            var destination = output
            for node in nodes {
                node.process(
                    source, into: destination, frameCount: count,
                    time: AudioTime(sampleTime: Int64(position), sampleRate: rate))
                swap(&source, &destination)
            }
            position += count
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        best = min(best, elapsed / Double(frames))
    }
    print("{\"name\": \"\(name)\", \"nsPerFrame\": \(best)}")
}

/// The chain's time against the synthesis time within one render, best of `runs`.
func inRender(song: String, font: String, runs: Int, fx: [String]) throws {
    let file = try MIDIFile.read(path: song).file
    let rate = 44_100.0
    let quantum = 1_024
    var best = (synthesis: Double.infinity, chain: Double.infinity, frames: 0)
    var settings = SamplerNode.Settings()
    settings.sampleRate = rate
    let owner = try SamplerNode(settings: settings)
    _ = try owner.loadSoundFont(at: font)
    for _ in 0..<runs {
        let sampler = try SamplerNode(settings: settings, sharingSoundFontsWith: owner)
        let player = MusicPlayer(sequence: MusicSequence(file: file), destination: sampler)
        let engine = AudioEngine()
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: quantum)
        let chain = try EffectChain(
            fx.map { try EffectSpec.parse($0) }, sampleRate: rate, channelCount: 2, maximumFrameCount: quantum)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
        player.play()
        var synthesis: UInt64 = 0
        var effects: UInt64 = 0
        var frames = 0
        while !player.isFinished {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = engine.render(frameCount: quantum, into: buffer)
            let middle = DispatchTime.now().uptimeNanoseconds
            chain.process(buffer, frameCount: quantum)
            let end = DispatchTime.now().uptimeNanoseconds
            synthesis += middle - start
            effects += end - middle
            frames += quantum
        }
        let run = (synthesis: Double(synthesis) / Double(frames), chain: Double(effects) / Double(frames))
        // Each figure is its best over the runs (the least disturbed by the machine).
        best = (min(best.synthesis, run.synthesis), min(best.chain, run.chain), frames)
    }
    print(
        "{\"synthesisNsPerFrame\": \(best.synthesis), \"chainNsPerFrame\": \(best.chain), \"frames\": \(best.frames)}")
}

/// The matched design's time per band, mean and worst over the grid (the worst of 5 repeats' best).
func designTime() {
    var total = 0.0
    var worst = 0.0
    var count = 0
    var sink = 0.0
    for type in FilterType.allCases {
        for f0 in [10.0, 30, 100, 1_000, 5_000, 10_000, 15_000, 18_000, 19_500, 21_000] {
            for gain in type.usesGain ? [-96.0, -48, -24, -12, 6, 12, 24] : [0.0] {
                for bandwidth in type.usesBandwidth ? [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5] : [1.0] {
                    let band = FilterBand(type: type, frequency: f0, gain: gain, bandwidth: bandwidth)
                    var best = Double.infinity
                    for _ in 0..<5 {
                        let start = DispatchTime.now().uptimeNanoseconds
                        let c = BandCoefficients(band, sampleRate: 48_000, design: .matched)
                        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start))
                        sink += c.main.b0 + c.correction.b0
                    }
                    total += best
                    worst = max(worst, best)
                    count += 1
                }
            }
        }
    }
    print(
        "{\"designs\": \(count), \"meanMicroseconds\": \(total / Double(count) / 1_000), \"worstMicroseconds\": \(worst / 1_000), \"checksum\": \(sink)}"
    )
}
