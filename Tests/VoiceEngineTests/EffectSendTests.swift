import AudioGraph
import Effects
import Foundation
import MIDICore
import Sampler
import SoundFontFiles
import TestSupport
import Testing
import VoiceComparison
import VoiceEngine

/// A note through either engine with its effects as given: `frames` of left and right. The note
/// (`program`, key 60, velocity 100) starts at frame 0 and ends at `holdFrames`, after the channel's
/// CC91 (reverb send) and CC93 (chorus send) are set.
func effectNote(
    native: Bool, reverb: Bool, chorus: Bool, reverbSend: Int, chorusSend: Int, program: Int = 0, key: Int = 60,
    holdFrames: Int, frames: Int
) throws -> (left: [Float], right: [Float]) {
    let node: any MIDIReceivingNode & AudioNode
    if native {
        let sampler = NativeSamplerNode(
            settings: VoiceSynthesizer.Settings(isReverbEnabled: reverb, isChorusEnabled: chorus))
        try sampler.load(try SoundFontBank(contentsOf: bundledFont))
        try sampler.prepare(format: .stereo(sampleRate: 44_100), maximumFrameCount: 64)
        node = sampler
    } else {
        var settings = SamplerNode.Settings()
        settings.isReverbEnabled = reverb
        settings.isChorusEnabled = chorus
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: bundledFont)
        node = sampler
    }
    node.receive(.programChange(channel: 0, program: UInt8(program)), atFrameOffset: 0)
    node.receive(.controlChange(channel: 0, controller: 91, value: UInt8(reverbSend)), atFrameOffset: 0)
    node.receive(.controlChange(channel: 0, controller: 93, value: UInt8(chorusSend)), atFrameOffset: 0)
    node.receive(.noteOn(channel: 0, note: UInt8(key), velocity: 100), atFrameOffset: 0)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
    var left: [Float] = []
    var right: [Float] = []
    var frame = 0
    while frame < frames {
        if (frame..<(frame + 64)).contains(holdFrames) {
            node.receive(.noteOff(channel: 0, note: UInt8(key), velocity: 0), atFrameOffset: holdFrames - frame)
        }
        node.render(
            into: buffer, inputs: .none, frameCount: 64, time: AudioTime(sampleTime: Int64(frame), sampleRate: 44_100))
        left += buffer.samples(channel: 0)[0..<64]
        right += buffer.samples(channel: 1)[0..<64]
        frame += 64
    }
    return (left, right)
}

/// Level in decibels of 10 ms windows.
func shortEnvelope(_ signal: [Float]) -> [Double] { envelope(signal, window: 441) }

/// Seconds from `start` for the energy still to come (Schroeder's backward integral) to fall by
/// `decibels` below its value at `start`.
func decayTime(_ signal: [Float], from start: Int, by decibels: Double) -> Double {
    var remaining = [Double](repeating: 0, count: signal.count - start + 1)
    for index in stride(from: signal.count - 1, through: start, by: -1) {
        remaining[index - start] = remaining[index - start + 1] + Double(signal[index]) * Double(signal[index])
    }
    let threshold = remaining[0] * pow(10, -decibels / 10)
    let index = remaining.firstIndex { $0 < threshold } ?? remaining.count
    return Double(index) / 44_100
}

func difference(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 - $1 } }

func energyDecibels(_ signal: ArraySlice<Float>) -> Double {
    10 * log10(max(signal.reduce(0.0) { $0 + Double($1) * Double($1) }, 1e-30))
}

@Suite("Native voice engine: reverb and chorus against FluidSynth's", .serialized)
struct EffectSendTests {
    @Test("a staccato note's reverb tail decays and sounds as FluidSynth's (CC91 127, chorus off)")
    func reverbTail() throws {
        let (frames, hold) = (44_100 * 3, 4_410)
        func note(native: Bool, reverb: Bool) throws -> (left: [Float], right: [Float]) {
            try effectNote(
                native: native, reverb: reverb, chorus: false, reverbSend: 127, chorusSend: 0, holdFrames: hold,
                frames: frames)
        }
        let dry = try note(native: false, reverb: false)
        let theirs = try note(native: false, reverb: true)
        let ours = try note(native: true, reverb: true)
        // The tail: from where the dry note has fallen 60 dB below its peak.
        let levels = shortEnvelope(dry.left)
        let tail = ((levels.lastIndex { $0 > levels.max()! - 60 } ?? 0) + 1) * 441
        for (mine, reference) in [(ours.left, theirs.left), (ours.right, theirs.right)] {
            let (time, referenceTime) = (decayTime(mine, from: tail, by: 30), decayTime(reference, from: tail, by: 30))
            #expect(
                abs(time / referenceTime - 1) <= 0.15, "decay to -30 dB: \(time) s, FluidSynth's \(referenceTime) s")
            let level = energyDecibels(mine[tail...]) - energyDecibels(reference[tail...])
            #expect(abs(level) <= 1.5, "tail level differs by \(level) dB")
            print("reverb tail: decay to -30 dB \(time) s, FluidSynth's \(referenceTime) s; level \(level) dB")
        }
        // Without the reverb, the native note's tail is silent.
        let plain = try note(native: true, reverb: false)
        #expect(energyDecibels(plain.left[tail...]) < energyDecibels(ours.left[tail...]) - 40)
    }

    @Test("a note through the chorus sounds as FluidSynth's (CC93 127, reverb off)")
    func chorus() throws {
        let (frames, hold) = (44_100 * 2, 44_100)
        func note(native: Bool, chorus: Bool) throws -> (left: [Float], right: [Float]) {
            try effectNote(
                native: native, reverb: false, chorus: chorus, reverbSend: 0, chorusSend: 127, holdFrames: hold,
                frames: frames)
        }
        let (theirs, theirsDry) = (try note(native: false, chorus: true), try note(native: false, chorus: false))
        let (ours, oursDry) = (try note(native: true, chorus: true), try note(native: true, chorus: false))
        for (mine, reference, mineDry, referenceDry) in [
            (ours.left, theirs.left, oursDry.left, theirsDry.left),
            (ours.right, theirs.right, oursDry.right, theirsDry.right),
        ] {
            let deviation = spectrumDeviation(mine, reference)
            #expect(deviation.rms <= 1.5, "spectrum deviates by \(deviation.rms) dB RMS")
            let shape = correlation(envelope(mine), envelope(reference))
            #expect(shape >= 0.98, "envelope correlation \(shape)")
            // The chorus's own output, relative to each engine's dry note.
            let wet = energyDecibels(difference(mine, mineDry)[...]) - energyDecibels(mineDry[...])
            let referenceWet =
                energyDecibels(difference(reference, referenceDry)[...]) - energyDecibels(referenceDry[...])
            #expect(abs(wet - referenceWet) <= 1, "chorus level \(wet) dB, FluidSynth's \(referenceWet) dB")
            print(
                "chorus: spectrum \(deviation.rms) dB RMS, envelope \(shape), wet \(wet) dB, "
                    + "FluidSynth's \(referenceWet) dB")
        }
    }

    @Test("with reverb and chorus off, the output is the synthesizer's dry signal")
    func switches() throws {
        let off = try effectNote(
            native: true, reverb: false, chorus: false, reverbSend: 127, chorusSend: 127, holdFrames: 4_410,
            frames: 44_096)  // (whole quanta of 64)
        let on = try effectNote(
            native: true, reverb: true, chorus: true, reverbSend: 127, chorusSend: 127, holdFrames: 4_410,
            frames: 44_096)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(try SoundFontBank(contentsOf: bundledFont))
        let dry = renderEvents(
            synthesizer,
            events: [
                (0, .programChange(channel: 0, program: 0)),
                (0, .controlChange(channel: 0, controller: 91, value: 127)),
                (0, .controlChange(channel: 0, controller: 93, value: 127)),
                (0, .noteOn(channel: 0, key: 60, velocity: 100)), (4_410, .noteOff(channel: 0, key: 60)),
            ], frames: 44_096, quantum: 64)
        #expect(off.left == dry.0 && off.right == dry.1)
        #expect(on.left != dry.0 && on.right != dry.1)
    }

    @Test("the demo song with reverb and chorus on: envelope and long-term spectrum are FluidSynth's")
    func song() throws {
        let seconds = 40.0
        let fluidSynth = try SamplerNode(settings: SamplerNode.Settings())
        try fluidSynth.loadSoundFont(at: bundledFont)
        let reference = try renderSong(demoSong, node: fluidSynth, seconds: seconds)
        let native = NativeSamplerNode()
        try native.load(try SoundFontBank(contentsOf: bundledFont))
        let ours = try renderSong(demoSong, node: native, seconds: seconds)
        for channel in 0..<2 {
            let theirs = stride(from: channel, to: reference.count, by: 2).map { reference[$0] }
            let mine = stride(from: channel, to: ours.count, by: 2).map { ours[$0] }
            let shape = correlation(envelope(mine), envelope(theirs))
            #expect(shape >= 0.98, "channel \(channel): envelope correlation \(shape)")
            let deviation = spectrumDeviation(mine, theirs)
            #expect(
                deviation.rms <= 1.5,
                "channel \(channel): spectrum deviates by \(deviation.rms) dB RMS: \(deviation.bands.map { Int(($0 * 10).rounded()) })"
            )
            let level = rmsDecibels(mine) - rmsDecibels(theirs)
            #expect(abs(level) < 1, "channel \(channel): level differs by \(level) dB")
            // Tighter than the bar: without the effects the native render is 0.75 dB quieter
            // and 0.55 dB RMS off in spectrum (the song's reverb send is CC91 40).
            #expect(
                abs(level) < 0.3 && deviation.rms < 0.35, "channel \(channel): \(level) dB, \(deviation.rms) dB RMS")
            print(
                "demo song, channel \(channel): envelope \(shape), spectrum \(deviation.rms) dB RMS, level \(level) dB")
        }
    }
}
