// CPU time per voice-sample of the native voice engine against FluidSynth's (Pianola's SamplerNode),
// side by side in one run: a chord of N sustained voices (the bundled font's square lead, dry),
// rendered in 64-frame quanta, each engine on the same thread, interleaved per N. Then, for each
// engine, the largest polyphony that renders in real time at 64-frame periods on this one thread:
// the most sustained voices whose average CPU time per 64-frame period stays under the period
// (1.45 ms at 44.1 kHz), found by doubling and then halving the interval (voices beyond 1024 are
// spread over several synthesizers of at most 1024 voices, rendered one after the other).
//
//   swift run -c release voice-benchmark [--seconds S] [--voices 16,64,256,1024]
//       [--realtime-seconds S | --no-realtime] [--font PATH] [--program P] [--json]
import AudioGraph
import Foundation
import Sampler
import SoundFontFiles
import VoiceEngine

#if canImport(Glibc)
    import Glibc
#endif

func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let seconds = Double(option("--seconds") ?? "") ?? 4
let realtimeSeconds = Double(option("--realtime-seconds") ?? "") ?? 1
let counts = (option("--voices") ?? "16,64,256,1024").split(separator: ",").compactMap { Int($0) }
let program = Int(option("--program") ?? "") ?? 80
let json = arguments.contains("--json")
let font =
    option("--font")
    ?? {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/SoundFonts/PianolaGM.sf2"
    }()
let period = 64
let sampleRate = 44_100.0
/// The most voices one synthesizer plays here (16 channels × 80 keys hold 1280 distinct notes).
let perSynthesizer = 1024

/// The keys of an N-voice chord: 16 channels, keys spread so that no key repeats on a channel.
func chord(_ voices: Int) -> [(channel: Int, key: Int)] {
    (0..<voices).map { index in (channel: index % 16 == 9 ? 15 : index % 16, key: 24 + (index / 16) % 80) }
}

/// `voices` split into synthesizers of at most `perSynthesizer`.
func split(_ voices: Int) -> [Int] {
    (0..<((voices + perSynthesizer - 1) / perSynthesizer)).map { min(perSynthesizer, voices - $0 * perSynthesizer) }
}

/// An engine under test: `render` renders one 64-frame period of every synthesizer.
struct Engine {
    var render: () -> Void
    var sounding: () -> Int
}

func fluidSynth(voices: Int) throws -> Engine {
    var samplers: [SamplerNode] = []
    for count in split(voices) {
        var settings = SamplerNode.Settings()
        settings.isReverbEnabled = false
        settings.isChorusEnabled = false
        settings.polyphony = max(256, count * 2)
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: font)
        for channel in 0..<16 {
            sampler.receive(.programChange(channel: UInt8(channel), program: UInt8(program)), atFrameOffset: 0)
        }
        for (channel, key) in chord(count) {
            sampler.receive(.noteOn(channel: UInt8(channel), note: UInt8(key), velocity: 100), atFrameOffset: 0)
        }
        samplers.append(sampler)
    }
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: period)
    let time = AudioTime(sampleTime: 0, sampleRate: sampleRate)
    return Engine(
        render: {
            for sampler in samplers { sampler.render(into: buffer, inputs: .none, frameCount: period, time: time) }
        },
        sounding: { samplers.reduce(0) { $0 + $1.activeVoiceCount } })
}

func native(voices: Int, bank: SoundFontBank) throws -> Engine {
    var synthesizers: [VoiceSynthesizer] = []
    for count in split(voices) {
        let synthesizer = VoiceSynthesizer(settings: .init(polyphony: max(256, count * 2)))
        try synthesizer.load(bank, presets: [(0, program)])
        for channel in 0..<16 { synthesizer.send(.programChange(channel: channel, program: program), atFrame: 0) }
        for (channel, key) in chord(count) {
            synthesizer.send(.noteOn(channel: channel, key: key, velocity: 100), atFrame: 0)
        }
        synthesizers.append(synthesizer)
    }
    let buses = UnsafeMutablePointer<Float>.allocate(capacity: 4 * period)
    buses.initialize(repeating: 0, count: 4 * period)
    return Engine(
        render: {
            for synthesizer in synthesizers {
                synthesizer.render(
                    frameCount: period, left: buses, right: buses + period, reverb: buses + 2 * period,
                    chorus: buses + 3 * period)
            }
        },
        sounding: { synthesizers.reduce(0) { $0 + $1.activeVoiceCount } })
}

/// CPU seconds per period and the voices sounding, over `seconds` of audio after one warm-up period.
func measure(_ engine: Engine, seconds: Double) -> (perPeriod: Double, sounding: Int) {
    let periods = max(1, Int(seconds * sampleRate) / period)
    engine.render()
    let start = cpuSeconds()
    for _ in 0..<periods { engine.render() }
    return ((cpuSeconds() - start) / Double(periods), engine.sounding())
}

func nanoseconds(_ result: (perPeriod: Double, sounding: Int)) -> Double {
    result.perPeriod * 1e9 / Double(max(result.sounding, 1) * period)
}

let bank = try SoundFontBank(contentsOf: font)
for voices in counts {
    let theirs = measure(try fluidSynth(voices: voices), seconds: seconds)
    let ours = measure(try native(voices: voices, bank: bank), seconds: seconds)
    let (fluidNs, nativeNs) = (nanoseconds(theirs), nanoseconds(ours))
    if json {
        print(
            "{\"voices\": \(voices), \"fluidsynthVoices\": \(theirs.sounding), \"nativeVoices\": \(ours.sounding), "
                + "\"fluidsynthNanosecondsPerVoiceSample\": \(fluidNs), \"nativeNanosecondsPerVoiceSample\": \(nativeNs)}"
        )
    } else {
        print(
            String(
                format: "%5d voices: FluidSynth %6.2f ns (%d sounding), native %6.2f ns (%d sounding): native %.2fx",
                voices, fluidNs, theirs.sounding, nativeNs, ours.sounding, fluidNs / nativeNs))
    }
}

/// The most voices sounding whose CPU time per period stays under the period's duration.
func realtimePolyphony(_ make: (Int) throws -> Engine) throws -> Int {
    let budget = Double(period) / sampleRate
    func fits(_ voices: Int) throws -> (Bool, Int) {
        let result = measure(try make(voices), seconds: realtimeSeconds)
        return (result.perPeriod <= budget, result.sounding)
    }
    var low = 0
    var high = 256
    var best = 0
    while true {
        let (ok, sounding) = try fits(high)
        if !ok { break }
        (low, best) = (high, sounding)
        high *= 2
    }
    while high - low > max(16, low / 50) {
        let middle = (low + high) / 2
        let (ok, sounding) = try fits(middle)
        if ok { (low, best) = (middle, sounding) } else { high = middle }
    }
    return best
}

if !arguments.contains("--no-realtime") {
    let theirs = try realtimePolyphony { try fluidSynth(voices: $0) }
    let ours = try realtimePolyphony { try native(voices: $0, bank: bank) }
    if json {
        print("{\"fluidsynthRealtimePolyphony\": \(theirs), \"nativeRealtimePolyphony\": \(ours)}")
    } else {
        print(
            String(
                format:
                    "real time at %d-frame periods on one core: FluidSynth %d voices, native %d voices: native %.2fx",
                period, theirs, ours, Double(ours) / Double(max(theirs, 1))))
    }
}
