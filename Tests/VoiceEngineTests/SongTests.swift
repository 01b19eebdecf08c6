import AudioGraph
import Foundation
import Sampler
import Sequencer
import SoundFontFiles
import TestSupport
import Testing
import VoiceComparison
import VoiceEngine

/// The demo song, from this file's location.
let demoSong: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/Examples/demo-song.mid"
}()

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
            // The all-sounds file's 50 Hz band is 46 dB down, 3.6 dB apart: outside the bands compared.
            let deviation = spectrumDeviation(mine, theirs)
            #expect(
                deviation.rms <= 1,
                "\(path), channel \(channel): spectrum deviates by \(deviation.rms) dB RMS: \(deviation.bands.map { Int(($0 * 10).rounded()) })"
            )
            let level = rmsDecibels(mine) - rmsDecibels(theirs)
            #expect(abs(level) < 1, "\(path), channel \(channel): level differs by \(level) dB")
        }
    }
}
