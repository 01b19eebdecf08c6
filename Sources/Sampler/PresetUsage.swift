import CFluidSynth
import MIDICore
import Sequencer

/// The SoundFont presets a song plays, as a sampler resolves them: what a sampler that loads
/// samples on demand (`SamplerNode.SampleLoading.onDemand`) loads before the audio starts.
///
/// It is found by playing the song's messages through a synthesizer whose fonts have the real
/// presets but no samples, so FluidSynth itself resolves bank selects, drum channels, resets and
/// its fallbacks for missing presets, with the sampler's program overrides and muted channels.
public struct PresetUsage: Hashable, Sendable {
    /// One preset of one font in a sampler's stack.
    public struct Preset: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The font's place in the stack, 0 for the first loaded.
        public var soundFont: Int
        /// The bank, 0–16383 (128 for drum kits in General MIDI fonts).
        public var bank: UInt16
        /// The program, 0–127.
        public var program: UInt8

        /// A preset of the `soundFont`-th font of the stack.
        public init(soundFont: Int, bank: UInt16, program: UInt8) {
            self.soundFont = soundFont
            self.bank = bank
            self.program = program
        }

        /// Stack order, then bank, then program.
        public static func < (lhs: Preset, rhs: Preset) -> Bool {
            (lhs.soundFont, lhs.bank, lhs.program) < (rhs.soundFont, rhs.bank, rhs.program)
        }

        /// `font/bank:program`, e.g. `0/128:0`.
        public var description: String { "\(soundFont)/\(bank):\(program)" }
    }

    /// Every preset that plays a note or is selected on a channel at any point.
    public var presets: Set<Preset>
    /// For each channel (0–15), the preset it has when it first plays or selects one: what a
    /// sampler selects on it before the audio starts (nil: the channel never has one).
    public var firstPresets: [Preset?]
    /// For each preset that plays, the notes it starts (key and velocity as the preset receives
    /// them): what decides which of its samples can sound.
    public var playedNotes: [Preset: PlayedNotes]
    /// Whether `playedNotes` holds every note the presets will start, so that samples no played
    /// note reaches may be left unread: true for a song's usage, unless the song gives a channel a
    /// tuning (MIDI Tuning Standard, the tuning RPNs: FluidSynth then picks samples by the tuned
    /// key); false for
    /// messages known in advance of live input, and for a usage made by hand.
    public var hasEveryNote: Bool

    /// Nothing used: the channels stay without presets.
    public init() {
        presets = []
        firstPresets = [Preset?](repeating: nil, count: 16)
        playedNotes = [:]
        hasEveryNote = false
    }

    /// The presets of both (a sampler that plays either song); the first presets of `self`,
    /// then of `other` where `self` has none.
    public func union(_ other: PresetUsage) -> PresetUsage {
        var result = self
        result.presets.formUnion(other.presets)
        result.playedNotes.merge(other.playedNotes) { $0.union($1) }
        result.hasEveryNote = hasEveryNote && other.hasEveryNote
        for channel in 0..<16 where result.firstPresets[channel] == nil {
            result.firstPresets[channel] = other.firstPresets[channel]
        }
        return result
    }

    mutating func record(_ preset: Preset, onChannel channel: Int) {
        presets.insert(preset)
        if channel >= 0, channel < 16, firstPresets[channel] == nil { firstPresets[channel] = preset }
    }

    /// The played notes of the `soundFont`-th font's presets, by bank and program.
    func playedNotes(ofFont soundFont: Int) -> [SoundFontSubset.PresetKey: PlayedNotes] {
        var notes: [SoundFontSubset.PresetKey: PlayedNotes] = [:]
        for (preset, played) in playedNotes where preset.soundFont == soundFont {
            notes[SoundFontSubset.PresetKey(bank: Int(preset.bank), program: Int(preset.program))] = played
        }
        return notes
    }
}

/// Plays messages through a synthesizer whose fonts wrap a sampler's real fonts with presets
/// that only record the note-ons they get (no voices, no samples).
final class PresetProbe {
    /// What the fake fonts' callbacks write to (one probe, one thread).
    final class Recorder {
        var usage = PresetUsage()
        /// The real font each fake font stands for, by stack position.
        let realFonts: [OpaquePointer]
        /// Fake presets made so far, by stack position and then `bank << 7 | program`.
        var fakePresets: [[Int: OpaquePointer]]

        init(realFonts: [OpaquePointer]) {
            self.realFonts = realFonts
            fakePresets = [[Int: OpaquePointer]](repeating: [:], count: realFonts.count)
        }
    }

    private let sampler: SamplerNode
    private let recorder: Recorder
    /// Whether a message played so far could have made a tuning: only SysEx (the MIDI Tuning
    /// Standard) and registered parameters (the tuning program and bank) make one.
    private var mayHaveTuning = false

    /// A probe for `owner`'s fonts, resolving as a sampler with `settings` does.
    init(fonts realFonts: [OpaquePointer], settings: SamplerNode.Settings) throws(SoundFontError) {
        var settings = settings
        settings.isReverbEnabled = false
        settings.isChorusEnabled = false
        settings.cpuCores = 1
        settings.sampleLoading = .whole
        sampler = try SamplerNode(name: "preset probe", settings: settings)
        recorder = Recorder(realFonts: realFonts)
        for index in realFonts.indices {
            // Each fake font keeps the recorder alive until FluidSynth frees the font.
            let context = Unmanaged.passRetained(recorder).toOpaque()
            guard
                let fake = new_fluid_sfont(
                    PresetProbe.fontName, PresetProbe.preset, nil, nil, PresetProbe.freeFont)
            else { continue }
            // The font's data: the recorder, with the stack position in the low bits of a box.
            fluid_sfont_set_data(fake, UnsafeMutableRawPointer(FakeFontBox.make(context: context, index: index)))
            fluid_synth_add_sfont(sampler.synth.synth, fake)
        }
        sampler.applyProgramOverrides()
        // An overridden channel has its preset from the start.
        for override in settings.programOverrides { probeSelection(onChannel: Int(override.channel)) }
    }

    /// The usage of `sequence`, merged across tracks in the order the music player delivers.
    func usage(of sequence: MusicSequence, transposedBy transpose: Int = 0) -> PresetUsage {
        recorder.usage.hasEveryNote = true
        let tracks = sequence.tracks
        var cursors = [Int](repeating: 0, count: tracks.count)
        while true {
            var best = -1
            var bestTick = Int.max
            var bestClass = Int.max
            for track in tracks.indices where cursors[track] < tracks[track].events.count {
                let event = tracks[track].events[cursors[track]]
                let order = MusicSequence.orderClass(event.message)
                if event.tick < bestTick || (event.tick == bestTick && order < bestClass) {
                    best = track
                    bestTick = event.tick
                    bestClass = order
                }
            }
            guard best >= 0 else { break }
            play(Self.transposed(tracks[best].events[cursors[best]].message, by: transpose))
            cursors[best] += 1
        }
        if hasTuning { recorder.usage.hasEveryNote = false }
        return recorder.usage
    }

    /// `message` with its key shifted as the music player shifts it (drums on channel 10 not).
    private static func transposed(_ message: MIDIMessage, by transpose: Int) -> MIDIMessage {
        guard transpose != 0 else { return message }
        switch message {
        case .noteOn(let channel, let key, let velocity) where channel != 9:
            return .noteOn(channel: channel, note: UInt8(min(127, max(0, Int(key) + transpose))), velocity: velocity)
        case .noteOff(let channel, let key, let velocity) where channel != 9:
            return .noteOff(channel: channel, note: UInt8(min(127, max(0, Int(key) + transpose))), velocity: velocity)
        default:
            return message
        }
    }

    /// Whether the probe's synthesizer has a tuning (a MIDI Tuning Standard message, or the
    /// tuning program and bank RPNs, make one): FluidSynth then picks samples by tuned keys.
    ///
    /// Asked tuning by tuning, not through FluidSynth's tuning iterator: the iterator keeps its
    /// place in a thread-local slot of each synthesizer, which takes a thread-local key from the
    /// process that is never given back. One per song, a batch of a thousand songs ran out of
    /// keys (GLib then aborts the process).
    private var hasTuning: Bool {
        guard mayHaveTuning else { return false }
        for bank in Int32(0)..<128 {
            for program in Int32(0)..<128
            where fluid_synth_tuning_dump(sampler.synth.synth, bank, program, nil, 0, nil) == FLUID_OK {
                return true
            }
        }
        return false
    }

    /// The usage of playing `messages` in order.
    func usage(of messages: [MIDIMessage]) -> PresetUsage {
        for message in messages { play(message) }
        return recorder.usage
    }

    private func play(_ message: MIDIMessage) {
        sampler.apply(message)
        switch message {
        case .controlChange(_, 100, _), .controlChange(_, 101, _):
            mayHaveTuning = true
        case .programChange(let channel, _):
            probeSelection(onChannel: Int(channel))
        case .systemExclusive, .systemReset:
            if case .systemExclusive = message { mayHaveTuning = true }
            for channel in 0..<16 { probeSelection(onChannel: channel) }
        default:
            break
        }
    }

    /// Records the preset now selected on `channel` (as FluidSynth resolved it). No note is
    /// played for it, which in mono mode could change what the song's own notes do.
    private func probeSelection(onChannel channel: Int) {
        guard let preset = fluid_synth_get_channel_preset(sampler.synth.synth, Int32(channel)),
            let box = Self.box(of: fluid_preset_get_sfont(preset))
        else { return }
        let number = Self.key(of: preset)
        recorder.usage.record(
            PresetUsage.Preset(soundFont: box.index, bank: UInt16(number >> 7), program: UInt8(number & 127)),
            onChannel: channel)
    }

    // MARK: FluidSynth callbacks (C function pointers: no captures)

    /// What a fake font's data points to.
    struct FakeFontBox {
        var context: UnsafeMutableRawPointer
        var index: Int

        static func make(context: UnsafeMutableRawPointer, index: Int) -> UnsafeMutablePointer<FakeFontBox> {
            let box = UnsafeMutablePointer<FakeFontBox>.allocate(capacity: 1)
            box.initialize(to: FakeFontBox(context: context, index: index))
            return box
        }
    }

    private static func box(of font: OpaquePointer?) -> FakeFontBox? {
        guard let data = fluid_sfont_get_data(font) else { return nil }
        return data.assumingMemoryBound(to: FakeFontBox.self).pointee
    }

    private static let fontName: fluid_sfont_get_name_t = { _ in PresetProbe.probeName }
    private nonisolated(unsafe) static let probeName: UnsafePointer<CChar> = {
        let bytes = Array("pianola preset probe".utf8CString)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        copy.initialize(from: bytes, count: bytes.count)
        return UnsafePointer(copy)
    }()

    /// A fake preset for (bank, program) when the real font has that preset.
    private static let preset: fluid_sfont_get_preset_t = { font, bank, program in
        guard let box = PresetProbe.box(of: font), bank >= 0, bank <= 16_383, program >= 0, program < 128 else {
            return nil
        }
        let recorder = Unmanaged<Recorder>.fromOpaque(box.context).takeUnretainedValue()
        let key = Int(bank) << 7 | Int(program)
        if let made = recorder.fakePresets[box.index][key] { return made }
        guard fluid_sfont_get_preset(recorder.realFonts[box.index], bank, program) != nil,
            let fake = new_fluid_preset(
                font, PresetProbe.presetName, PresetProbe.bank, PresetProbe.number,
                PresetProbe.noteOn, PresetProbe.freePreset)
        else { return nil }
        fluid_preset_set_data(fake, UnsafeMutableRawPointer(bitPattern: key + 1))
        recorder.fakePresets[box.index][key] = fake
        return fake
    }

    private static func key(of preset: OpaquePointer?) -> Int { Int(bitPattern: fluid_preset_get_data(preset)) - 1 }
    private static let presetName: fluid_preset_get_name_t = { _ in PresetProbe.probeName }
    private static let bank: fluid_preset_get_banknum_t = { Int32(PresetProbe.key(of: $0) >> 7) }
    private static let number: fluid_preset_get_num_t = { Int32(PresetProbe.key(of: $0) & 127) }

    private static let noteOn: fluid_preset_noteon_t = { preset, _, channel, key, velocity in
        guard let box = PresetProbe.box(of: fluid_preset_get_sfont(preset)) else { return FLUID_FAILED }
        let recorder = Unmanaged<Recorder>.fromOpaque(box.context).takeUnretainedValue()
        let number = PresetProbe.key(of: preset)
        let played = PresetUsage.Preset(soundFont: box.index, bank: UInt16(number >> 7), program: UInt8(number & 127))
        recorder.usage.record(played, onChannel: Int(channel))
        recorder.usage.playedNotes[played, default: PlayedNotes()].insert(key: Int(key), velocity: Int(velocity))
        return FLUID_OK
    }

    private static let freePreset: fluid_preset_free_t = { delete_fluid_preset($0) }

    private static let freeFont: fluid_sfont_free_t = { font in
        if let data = fluid_sfont_get_data(font) {
            let box = data.assumingMemoryBound(to: FakeFontBox.self)
            let recorder = Unmanaged<Recorder>.fromOpaque(box.pointee.context).takeUnretainedValue()
            for fake in recorder.fakePresets[box.pointee.index].values { delete_fluid_preset(fake) }
            recorder.fakePresets[box.pointee.index] = [:]
            Unmanaged<Recorder>.fromOpaque(box.pointee.context).release()
            box.deinitialize(count: 1)
            box.deallocate()
        }
        return delete_fluid_sfont(font)
    }
}
