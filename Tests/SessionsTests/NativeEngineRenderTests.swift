import AudioGraph
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

    @Test("AudioSequencer's tail waits for the native node's voices, then ends: no voice left, the output quiet")
    func sequencerTail() throws {
        let node = NativeSamplerNode()
        node.load(try VoiceFont(bank: SoundFontBank(contentsOf: bundledFontPath)))
        let engine = AudioEngine()
        try engine.attach(node)
        try engine.connect(node, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
        let sequencer = AudioSequencer(audioEngine: engine)
        let sequence = MusicSequence(file: busyFile(notes: [0: 8, 9: 8]))
        sequencer.load(sequence)
        try sequencer.start()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)
        var frames = 0
        var voicesAtMusicEnd = 0
        while !sequencer.isFinished(includingTail: true) && frames < 44_100 * 60 {
            try engine.renderOffline(frameCount: 512, into: buffer)
            frames += 512
            if sequencer.isFinished && voicesAtMusicEnd == 0 { voicesAtMusicEnd = node.activeVoiceCount }
        }
        let seconds = Double(frames) / 44_100
        #expect(voicesAtMusicEnd > 0, "the last notes still sound when the music ends")
        #expect(node.activeVoiceCount == 0)
        #expect(seconds > sequence.durationSeconds && seconds < sequence.durationSeconds + 5, "\(seconds) s")
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
