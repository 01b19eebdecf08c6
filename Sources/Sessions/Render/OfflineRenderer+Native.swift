import MIDICore
import Sampler
import Sequencer
import SoundFontFiles
import VoiceEngine

extension OfflineRenderer {
    /// The native engine's settings for `options`.
    static func voiceSettings(_ options: RenderOptions) -> VoiceSynthesizer.Settings {
        VoiceSynthesizer.Settings(
            sampleRate: options.sampleRate, polyphony: options.polyphony,
            isReverbEnabled: options.isSynthReverbEnabled, isChorusEnabled: options.isSynthChorusEnabled)
    }

    /// What the native engine cannot do with `options`, refused before anything is read.
    func checkNativeEngine() throws(RenderError) {
        guard options.engine == .native else { return }
        guard options.timing == .exact else {
            throw .graph(
                "FluidSynth's player timing needs FluidSynth's engine: use the exact timing with the native one")
        }
        guard options.programOverrides.isEmpty else {
            throw .graph("program overrides need FluidSynth's engine: the native one plays the song's programs")
        }
    }

    /// The native engine's font for `sequence`: every sample when loading whole (read once for
    /// the renderer), else only those of the presets the song selects.
    func voiceFont(for sequence: MusicSequence) throws(RenderError) -> VoiceFont {
        do {
            guard options.sampleLoading == .onDemand else { return try fonts.voiceFont(presets: nil) }
            let bank = try fonts.voiceBank()
            return try fonts.voiceFont(presets: Self.presets(playedBy: sequence, in: bank))
        } catch {
            throw .soundFont(error)
        }
    }

    /// The presets (bank and program) the native engine may play for `sequence`: on each channel
    /// the song uses, every program it selects under every bank it selects (and the defaults,
    /// bank 0 program 0, the drum channel's bank 128), after the engine's fallbacks.
    static func presets(playedBy sequence: MusicSequence, in bank: SoundFontBank) -> [(bank: Int, program: Int)] {
        var banks = [Set<Int>](repeating: [0], count: 16)
        var programs = [Set<Int>](repeating: [0], count: 16)
        var used = Set<Int>()
        for track in sequence.tracks {
            for event in track.events {
                switch event.message {
                case .controlChange(let channel, 0, let value): banks[Int(channel)].insert(Int(value))
                case .programChange(let channel, let program): programs[Int(channel)].insert(Int(program))
                case .noteOn(let channel, _, _): used.insert(Int(channel))
                default: break
                }
            }
        }
        var presets: [(bank: Int, program: Int)] = []
        for channel in used.sorted() {
            for bankNumber in banks[channel] {
                for program in programs[channel] {
                    guard
                        let preset = VoiceSynthesizer.preset(
                            in: bank, channel: channel, bank: bankNumber, program: program),
                        !presets.contains(where: { $0.bank == preset.bank && $0.program == preset.program })
                    else { continue }
                    presets.append((preset.bank, preset.program))
                }
            }
        }
        return presets
    }

    /// `sequence` without the muted channels (the native engine has no channel mute of its own).
    func unmuted(_ sequence: MusicSequence) -> MusicSequence {
        guard !options.mutedChannels.isEmpty else { return sequence }
        return sequence.keepingChannels(Set(0..<16).subtracting(options.mutedChannels))
    }

    /// A native sampler node playing `font`.
    func makeNativeSampler(_ font: VoiceFont) -> NativeSamplerNode {
        let node = NativeSamplerNode(settings: Self.voiceSettings(options))
        node.load(font)
        return node
    }

    /// The native engine's lanes for `sequence`: one node playing the whole song, or with
    /// `threads` above 1 and a song that splits evenly, one per part of its channels, all playing
    /// one copy of the font.
    func makeNativeLanes(for sequence: MusicSequence) throws(RenderError) -> [RenderLane] {
        let sequence = unmuted(sequence)
        let font = try voiceFont(for: sequence)
        let split =
            options.threads > 1
            ? ChannelSplit.plan(for: sequence, parts: options.threads) { channel, bank, program, key, velocity in
                font.voiceShapes(
                    channel: channel, bank: bank, program: program, key: Int(key), velocity: Int(velocity))
            } : nil
        var lanes: [RenderLane] = []
        let laneChannels: [Set<Int>?] = split ?? [nil]
        for channels in laneChannels {
            let laneSequence = channels.map { sequence.keepingChannels(Set($0.map { UInt8($0) })) } ?? sequence
            do {
                lanes.append(
                    try RenderLane(sampler: makeNativeSampler(font), sequence: laneSequence, options: options))
            } catch {
                throw .graph("\(error)")
            }
        }
        return lanes
    }

    /// The native engine's lanes for stems: one node per stem, all playing one copy of the font
    /// (the song's presets).
    func makeNativeStemLanes(
        _ plan: [(info: StemInfo, sequence: MusicSequence)], of sequence: MusicSequence
    ) throws(RenderError) -> [RenderLane] {
        let font = try voiceFont(for: sequence)
        var lanes: [RenderLane] = []
        for stem in plan {
            do {
                lanes.append(
                    try RenderLane(sampler: makeNativeSampler(font), sequence: unmuted(stem.sequence), options: options)
                )
            } catch {
                throw .graph("\(error)")
            }
        }
        return lanes
    }
}
