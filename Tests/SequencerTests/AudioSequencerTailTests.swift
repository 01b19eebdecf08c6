import AudioGraph
import Foundation
import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

/// An instrument whose note rings on after its note-off: a 0.5 sine while held, then decaying
/// by e every `decaySeconds` (`holdsVoice`: a voice that stays, silent, once the sound is gone;
/// `decaySeconds` infinite: a sound that never ends). Its voice ends below 1e-5 (−100 dBFS).
final class RingingNode: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    let decaySeconds: Double
    let holdsVoice: Bool
    private var amplitude = 0.0
    private var released = false
    private var phase = 0.0
    private var pending: [(Int, MIDIMessage)] = []
    private var voices = 0

    init(decaySeconds: Double, holdsVoice: Bool = false) {
        self.decaySeconds = decaySeconds
        self.holdsVoice = holdsVoice
        super.init(name: "ringing instrument")
        pending.reserveCapacity(64)
    }

    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) { pending.append((frameOffset, message)) }

    var activeVoiceCount: Int { voices }

    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        let decay = exp(-1 / (decaySeconds * time.sampleRate))
        var next = 0
        for frame in 0..<frameCount {
            while next < pending.count && pending[next].0 <= frame {
                switch pending[next].1 {
                case .noteOn(_, _, let velocity) where velocity > 0: (amplitude, released) = (0.5, false)
                case .noteOn, .noteOff: released = true
                default: break
                }
                next += 1
            }
            if released { amplitude *= decay }
            if amplitude < 1e-5 { amplitude = 0 }
            phase += 2 * Double.pi * 440 / time.sampleRate
            let sample = Float(amplitude * sin(phase))
            output.channel(0)[frame] = sample
            output.channel(1)[frame] = sample
        }
        pending.removeAll(keepingCapacity: true)
        voices = amplitude > 0 || (holdsVoice && released) ? 1 : 0
    }
}

/// A note from 1 s to 1.25 s (120 BPM, 480 PPQN), the end of the song.
private let shortNote = MusicSequence(file: makeFile(tracks: [[(960, on(69)), (1_200, off(69))]]))

/// The peak of a buffer's first `frames` frames.
private func peak(_ buffer: AudioBuffer, frames: Int) -> Float {
    (0..<buffer.channelCount).map { channel in
        UnsafeBufferPointer(start: buffer.channel(channel), count: frames).map(abs).max() ?? 0
    }.max() ?? 0
}

@Suite("AudioSequencer: rendering a song whole, its tail included")
struct AudioSequencerTailTests {
    /// An engine at 48 kHz playing `instrument`, with a sequencer that has `shortNote` loaded and started.
    func playing(_ instrument: RingingNode) throws -> (AudioEngine, AudioSequencer) {
        let engine = AudioEngine()
        try engine.attach(instrument)
        try engine.connect(instrument, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 480)
        let sequencer = AudioSequencer(audioEngine: engine)
        sequencer.load(shortNote)
        try sequencer.start()
        return (engine, sequencer)
    }

    @Test(
        "isFinished stops at the last event with the note ringing; isFinished(includingTail:) waits until it died away")
    func tailIsRendered() throws {
        let (engine, sequencer) = try playing(RingingNode(decaySeconds: 0.05))
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 480)
        var last: Float = 0
        while !sequencer.isFinished {
            try engine.renderOffline(frameCount: 480, into: buffer)
            last = peak(buffer, frames: 480)
        }
        #expect(!sequencer.isFinished(includingTail: true))
        #expect(last > 0.1, "the song's end still sounds at \(last)")
        let end = engine.currentSampleTime
        while !sequencer.isFinished(includingTail: true) {
            try engine.renderOffline(frameCount: 480, into: buffer)
            last = peak(buffer, frames: 480)
            #expect(engine.currentSampleTime - end < 48_000 * 30, "the tail never ended")
            if engine.currentSampleTime - end >= 48_000 * 30 { return }
        }
        #expect(last < AudioEngine.silenceThreshold)
        // 0.5 · e^(−t / 50 ms) is under −90 dBFS after 0.48 s, and its voice ends at −100 dBFS,
        // after 0.54 s: the tail ends with the quantum in which the voice ended.
        let tailSeconds = Double(engine.currentSampleTime - end) / 48_000
        #expect(tailSeconds > 0.53 && tailSeconds < 0.56, "\(tailSeconds) s of tail")
        #expect(sequencer.isFinished(includingTail: false) && sequencer.isFinished)
    }

    @Test(
        "voices still held when the sound is gone are waited for 2 s of silence; a sound that never ends, until maximumTailSeconds"
    )
    func tailLimits() throws {
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 480)
        func tail(_ instrument: RingingNode, maximum: Double = 30) throws -> Double {
            let (engine, sequencer) = try playing(instrument)
            sequencer.maximumTailSeconds = maximum
            while !sequencer.isFinished { try engine.renderOffline(frameCount: 480, into: buffer) }
            let end = engine.currentSampleTime
            while !sequencer.isFinished(includingTail: true) && engine.currentSampleTime - end < 48_000 * 60 {
                try engine.renderOffline(frameCount: 480, into: buffer)
            }
            return Double(engine.currentSampleTime - end) / 48_000
        }
        let held = try tail(RingingNode(decaySeconds: 0.05, holdsVoice: true))
        #expect(held > 2.47 && held < 2.50, "\(held) s: 0.48 s to fall under −90 dBFS, then 2 s of silence")
        let endless = try tail(RingingNode(decaySeconds: .infinity), maximum: 1.5)
        #expect(endless >= 1.5 && endless < 1.52, "\(endless) s")
    }
}
