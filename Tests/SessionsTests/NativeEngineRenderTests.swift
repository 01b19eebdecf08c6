import Foundation
import SMF
import Sampler
import Sequencer
import SoundFontFiles
import TestSupport
import Testing
import VoiceEngine

@testable import Sessions

@Suite("Renders with the native voice engine", .serialized)
struct NativeEngineRenderTests {
    private func options(_ loading: SamplerNode.SampleLoading) -> RenderOptions {
        var options = RenderOptions()
        options.encoding = .f32
        options.sampleLoading = loading
        options.engine = .native
        return options
    }

    @Test("on demand, the native engine reads only the song's presets' samples, and renders what the whole font does")
    func onDemandReadsTheSongsPresets() throws {
        let file = busyFile(notes: [0: 20, 1: 20, 9: 20])
        let bank = try SoundFontBank(contentsOf: bundledFontPath)
        let presets = OfflineRenderer.presets(playedBy: MusicSequence(file: file), in: bank)
        // Programs 0 and 7 (the default and channel 1's), and the drum kit, bank 128.
        #expect(presets.map { "\($0.bank):\($0.program)" }.sorted() == ["0:0", "0:7", "128:0"])
        let subset = try VoiceFont(bank: bank, presets: presets)
        let whole = try VoiceFont(bank: bank)
        #expect(subset.sampleCount > 0 && subset.sampleCount < whole.sampleCount)
        #expect(subset.sampleBytes < whole.sampleBytes)
        try withTemporaryFolder("native-render") { directory in
            _ = try OfflineRenderer(soundFont: bundledFontPath, options: options(.whole))
                .render(file, to: directory + "/whole.wav")
            _ = try OfflineRenderer(soundFont: bundledFontPath, options: options(.onDemand))
                .render(file, to: directory + "/song.wav")
            let (whole, song) = (try readFloatWAV(directory + "/whole.wav"), try readFloatWAV(directory + "/song.wav"))
            #expect(whole.count == song.count && whole == song)
            #expect((whole.map(abs).max() ?? 0) > 0.01)
        }
    }

    @Test("the native engine refuses a stack of fonts in one line, naming FluidSynth's engine for it")
    func refusesStacks() throws {
        #expect {
            _ = try OfflineRenderer(soundFonts: [bundledFontPath, bundledFontPath], options: options(.onDemand))
        } throws: { error in
            "\(error)"
                == "cannot create the synthesizer: the native engine plays one SoundFont, not a stack of 2: stack them with the FluidSynth engine"
        }
    }
}
