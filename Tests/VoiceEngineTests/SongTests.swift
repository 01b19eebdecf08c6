import AudioGraph
import Foundation
import Sampler
import Sequencer
import SoundFontFiles
import TestSupport
import Testing
import VoiceEngine

/// The demo song, from this file's location.
let demoSong: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/Examples/demo-song.mid"
}()

/// The first `seconds` of `song` through `node` (a sampler of either engine), interleaved stereo.
func renderSong(_ song: String, node: any MIDIReceivingNode, seconds: Double) throws -> [Float] {
    let engine = AudioEngine()
    try engine.attach(node)
    try engine.connect(node, to: engine.mainMixerNode)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
    let sequencer = AudioSequencer(audioEngine: engine)
    try sequencer.load(from: song)
    try sequencer.start()
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)
    var output: [Float] = []
    let frames = Int(seconds * 44_100)
    output.reserveCapacity(frames * 2)
    while output.count < frames * 2 {
        try engine.renderOffline(frameCount: 512, into: buffer)
        for index in 0..<512 { output += [buffer.channel(0)[index], buffer.channel(1)[index]] }
    }
    return output
}

/// Power in 1/3-octave bands from 50 Hz to 16 kHz, in decibels relative to the total, averaged
/// over the whole signal (Hann windows of 4096 frames, a radix-2 FFT).
func thirdOctaveSpectrum(_ signal: [Float]) -> [Double] {
    let size = 4096
    var power = [Double](repeating: 0, count: size / 2)
    let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
    for start in stride(from: 0, to: signal.count - size, by: size / 2) {
        var real = (0..<size).map { Double(signal[start + $0]) * window[$0] }
        var imaginary = [Double](repeating: 0, count: size)
        fft(&real, &imaginary)
        for bin in 0..<(size / 2) { power[bin] += real[bin] * real[bin] + imaginary[bin] * imaginary[bin] }
    }
    var bands: [Double] = []
    var centre = 50.0
    while centre <= 16_000 {
        let (low, high) = (centre / pow(2, 1.0 / 6), centre * pow(2, 1.0 / 6))
        let bins =
            Int(low * Double(size) / 44_100)...max(Int(low * Double(size) / 44_100), Int(high * Double(size) / 44_100))
        bands.append(bins.reduce(0.0) { $0 + power[min($1, size / 2 - 1)] })
        centre *= pow(2, 1.0 / 3)
    }
    let total = bands.reduce(0, +)
    return bands.map { 10 * log10(max($0 / total, 1e-12)) }
}

func fft(_ real: inout [Double], _ imaginary: inout [Double]) {
    let count = real.count
    var j = 0
    for i in 1..<count {
        var bit = count >> 1
        while j & bit != 0 {
            j ^= bit
            bit >>= 1
        }
        j ^= bit
        if i < j {
            real.swapAt(i, j)
            imaginary.swapAt(i, j)
        }
    }
    var length = 2
    while length <= count {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: count, by: length) {
            for k in 0..<(length / 2) {
                let (wr, wi) = (cos(angle * Double(k)), sin(angle * Double(k)))
                let (a, b) = (start + k, start + k + length / 2)
                let tr = real[b] * wr - imaginary[b] * wi
                let ti = real[b] * wi + imaginary[b] * wr
                real[b] = real[a] - tr
                imaginary[b] = imaginary[a] - ti
                real[a] += tr
                imaginary[a] += ti
            }
        }
        length <<= 1
    }
}

@Suite("Native voice engine: songs against FluidSynth", .serialized)
struct SongTests {
    static var songs: [String] {
        [demoSong]
            + [corpusRoot + "/jazz-soft-test-midi-files/test-all-gm-sounds.mid"].filter {
                FileManager.default.fileExists(atPath: $0)
            }
    }

    @Test("a song's envelope and long-term spectrum are FluidSynth's (reverb and chorus off)", arguments: songs)
    func song(path: String) throws {
        let seconds = 40.0
        var settings = SamplerNode.Settings()
        settings.isReverbEnabled = false
        settings.isChorusEnabled = false
        let fluidSynth = try SamplerNode(settings: settings)
        try fluidSynth.loadSoundFont(at: bundledFont)
        let reference = try renderSong(path, node: fluidSynth, seconds: seconds)
        let native = NativeSamplerNode(settings: .init(isReverbEnabled: false, isChorusEnabled: false))
        try native.load(try SoundFontBank(contentsOf: bundledFont))
        let ours = try renderSong(path, node: native, seconds: seconds)
        for channel in 0..<2 {
            let theirs = stride(from: channel, to: reference.count, by: 2).map { reference[$0] }
            let mine = stride(from: channel, to: ours.count, by: 2).map { ours[$0] }
            let shape = correlation(envelope(mine), envelope(theirs))
            #expect(shape >= 0.99, "\(path), channel \(channel): envelope correlation \(shape)")
            // Bands within 40 dB of FluidSynth's strongest: a quieter band holds under 0.01 % of the
            // energy, and a few onsets decide its level (the corpus's all-sounds file has its 50 Hz
            // band 46 dB down, 3.6 dB apart).
            let bands = thirdOctaveSpectrum(theirs)
            let strongest = bands.max() ?? 0
            let spectra = zip(thirdOctaveSpectrum(mine), bands).filter { $0.1 >= strongest - 40 }.map { $0 - $1 }
            let deviation = (spectra.reduce(0) { $0 + $1 * $1 } / Double(spectra.count)).squareRoot()
            #expect(
                deviation <= 1,
                "\(path), channel \(channel): spectrum deviates by \(deviation) dB RMS: \(spectra.map { Int(($0 * 10).rounded()) })"
            )
            let level = rmsDecibels(mine) - rmsDecibels(theirs)
            #expect(abs(level) < 1, "\(path), channel \(channel): level differs by \(level) dB")
        }
    }
}
