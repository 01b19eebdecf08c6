import AudioGraph
import Foundation
import Sampler
import Sequencer
import VoiceEngine

// What the native engine's tests and the fidelity sweep (`voice-fidelity`) share: the same
// notes and songs rendered by both engines, and the measures that compare them.

/// A FluidSynth sampler (Pianola's SamplerNode) with `font` loaded, reverb and chorus off.
public func fluidSynthSampler(font: String) throws -> SamplerNode {
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: font)
    return sampler
}

/// A new FluidSynth sampler with `base`'s SoundFonts (not loaded again), reverb and chorus off:
/// a note of its own with nothing left of earlier ones.
public func fluidSynthSampler(sharingFontsOf base: SamplerNode) throws -> SamplerNode {
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    return try SamplerNode(settings: settings, sharingSoundFontsWith: base)
}

/// A note rendered by FluidSynth (Pianola's SamplerNode, reverb and chorus off): left, right.
public func fluidSynthNote(
    font: String, program: Int, bank: Int = 0, channel: Int = 0, key: Int, velocity: Int, holdFrames: Int,
    frames: Int
) throws -> ([Float], [Float]) {
    fluidSynthNote(
        sampler: try fluidSynthSampler(font: font), program: program, bank: bank, channel: channel, key: key,
        velocity: velocity, holdFrames: holdFrames, frames: frames)
}

/// A note rendered by `sampler` after a MIDI system reset: left, right.
public func fluidSynthNote(
    sampler: SamplerNode, program: Int, bank: Int = 0, channel: Int = 0, key: Int, velocity: Int, holdFrames: Int,
    frames: Int
) -> ([Float], [Float]) {
    sampler.receive(.systemReset, atFrameOffset: 0)
    if bank != 0 {
        sampler.receive(.controlChange(channel: UInt8(channel), controller: 0, value: UInt8(bank)), atFrameOffset: 0)
    }
    sampler.receive(.programChange(channel: UInt8(channel), program: UInt8(program)), atFrameOffset: 0)
    sampler.receive(.noteOn(channel: UInt8(channel), note: UInt8(key), velocity: UInt8(velocity)), atFrameOffset: 0)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
    var left: [Float] = []
    var right: [Float] = []
    left.reserveCapacity(frames + 64)
    right.reserveCapacity(frames + 64)
    var frame = 0
    while frame < frames {
        if (frame..<(frame + 64)).contains(holdFrames) {
            sampler.receive(
                .noteOff(channel: UInt8(channel), note: UInt8(key), velocity: 0), atFrameOffset: holdFrames - frame)
        }
        sampler.render(
            into: buffer, inputs: .none, frameCount: 64, time: AudioTime(sampleTime: Int64(frame), sampleRate: 44_100))
        left += buffer.samples(channel: 0)[0..<64]
        right += buffer.samples(channel: 1)[0..<64]
        frame += 64
    }
    return (Array(left.prefix(frames)), Array(right.prefix(frames)))
}

/// The same note rendered by the native engine, in quanta of `quantum` frames.
public func nativeNote(
    synthesizer: VoiceSynthesizer, program: Int, bank: Int = 0, channel: Int = 0, key: Int, velocity: Int,
    startFrame: Int = 0, holdFrames: Int, frames: Int, quantum: Int = 64
) -> ([Float], [Float]) {
    renderEvents(
        synthesizer,
        events: [
            (0, .controlChange(channel: channel, controller: 0, value: bank)),
            (0, .programChange(channel: channel, program: program)),
            (startFrame, .noteOn(channel: channel, key: key, velocity: velocity)),
            (startFrame + holdFrames, .noteOff(channel: channel, key: key)),
        ], frames: frames, quantum: quantum)
}

/// `events` (at frames from the start) rendered by the native engine after a reset, in quanta
/// of `quantum` frames: the left and right channels.
public func renderEvents(
    _ synthesizer: VoiceSynthesizer, events: [(Int, VoiceSynthesizer.Event)], frames: Int, quantum: Int
) -> ([Float], [Float]) {
    synthesizer.send(.reset, atFrame: 0)
    var left = [Float](repeating: 0, count: frames)
    var right = left
    var reverb = left
    var chorus = left
    var pending = events
    var frame = 0
    while frame < frames {
        let count = min(quantum, frames - frame)
        while let first = pending.first, first.0 < frame + count {
            synthesizer.send(first.1, atFrame: first.0 - frame)
            pending.removeFirst()
        }
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                reverb.withUnsafeMutableBufferPointer { v in
                    chorus.withUnsafeMutableBufferPointer { c in
                        synthesizer.render(
                            frameCount: count, left: l.baseAddress! + frame, right: r.baseAddress! + frame,
                            reverb: v.baseAddress! + frame, chorus: c.baseAddress! + frame)
                    }
                }
            }
        }
        frame += count
    }
    return (left, right)
}

/// The first `seconds` of `song` through `node` (a sampler of either engine), interleaved stereo.
public func renderSong(_ song: String, node: any MIDIReceivingNode, seconds: Double) throws -> [Float] {
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
