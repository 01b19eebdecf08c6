import AudioGraph
import Sequencer

/// Event timing as FluidSynth 2.x's own MIDI player has it, for renders that must match
/// `fluidsynth -F` sample for sample (a dataset rendered with FluidSynth before, say).
///
/// Before each 64-frame block the player reads the sample clock as whole milliseconds, converts
/// them to ticks (rounded to nearest) from the last tempo anchor, and sends every event up to that
/// tick, track after track in file order; the synthesizer applies them at the start of the next
/// block. A tempo event re-anchors at the block's millisecond and tick. Notes pass as the file
/// has them (a note-on for a sounding key retriggers inside the synthesizer).
///
/// Plays from the start at rate 1: loops, rate changes and seeks are not part of this timing.
///
/// Bit for bit, it also matters *when* the synthesizer takes the events: FluidSynth's player
/// sends a block's events before rendering it, so a note-on finds busy the voices that finish in
/// that block (it takes another voice, whose mix starts from another gain; at the polyphony limit
/// another voice is stolen). Delivered `.whenSent` to a `SamplerNode` whose settings have
/// `takesEventsAsFluidSynthPlayer`, the events reach FluidSynth the same way.
public struct FluidSynthPlayerTiming: EventTimingPolicy {
    /// Where in the quantum a block's events are delivered.
    public enum Delivery: Sendable, Hashable {
        /// At the block where the synthesizer applies them (64 frames after the player sends
        /// them): the timing FluidSynth's player gives, for any destination.
        case whenApplied
        /// At the start of the block where the player sends them, for a `SamplerNode` with
        /// `takesEventsAsFluidSynthPlayer`: it hands them to FluidSynth inside that block's
        /// render, as the player does, and they sound from the next block.
        case whenSent
    }

    /// Where the events are delivered (`.whenApplied` by default).
    public let delivery: Delivery

    /// The policy (each player gets a scheduler of its own from `makeScheduler(for:)`).
    public init(delivery: Delivery = .whenApplied) { self.delivery = delivery }

    public var passesNotesThrough: Bool { true }

    /// A scheduler for files timed in ticks per quarter note; SMPTE-timed files play with the
    /// player's own timing.
    public func makeScheduler(for sequence: MusicSequence) -> (any EventScheduler)? {
        guard let ticks = sequence.tempoMap.division.ticksPerQuarterNote else { return nil }
        return Scheduler(sequence: sequence, ticksPerQuarterNote: ticks, delivery: delivery)
    }

    /// FluidSynth keeps milliseconds per tick in single precision: `(float)tempo / division / 1000.0`
    /// stored in a float. The rounding matters: it decides which block some events fall in.
    public static func millisecondsPerTick(tempo: Int, ticksPerQuarterNote: Int) -> Double {
        Double(Float(Double(Float(tempo) / Float(ticksPerQuarterNote)) / 1_000))
    }

    /// FluidSynth's block: the player sends before each one; the synthesizer applies at its start.
    static let blockFrames: Int64 = 64

    /// The player's clock and tempo anchor (render thread).
    final class Scheduler: EventScheduler {
        let sequence: MusicSequence
        let ticksPerQuarterNote: Int
        var startMilliseconds = 0
        var startTicks = 0
        var millisecondsPerTick: Double
        var tempoCursor = 0
        /// Frames from the start of the block whose events are sent to where they are delivered.
        let lead: Int64

        init(sequence: MusicSequence, ticksPerQuarterNote: Int, delivery: Delivery) {
            self.sequence = sequence
            self.ticksPerQuarterNote = ticksPerQuarterNote
            lead = delivery == .whenSent ? 0 : FluidSynthPlayerTiming.blockFrames
            millisecondsPerTick = FluidSynthPlayerTiming.millisecondsPerTick(
                tempo: 500_000, ticksPerQuarterNote: ticksPerQuarterNote)
        }

        func schedule(frameCount: Int, at time: AudioTime, through playhead: SequencePlayhead) -> ScheduledQuantum {
            let blockSize = FluidSynthPlayerTiming.blockFrames
            let tempos = sequence.tempoMap.tempoChanges
            let sampleRate = time.sampleRate
            let quantumStart = time.sampleTime
            let quantumEnd = time.sampleTime + Int64(frameCount)
            let position = Double(quantumEnd) / sampleRate
            // Block b's events are sent at 64·b and take effect at 64·(b+1); handle the blocks
            // whose delivery (the one or the other) falls here.
            var block = max(0, (quantumStart - lead + blockSize - 1) / blockSize)
            while block * blockSize + lead < quantumEnd {
                defer { block += 1 }
                let applyAt = (block + 1) * blockSize
                let milliseconds = Int(1_000 * Double(block * blockSize) / sampleRate)
                let currentTicks =
                    startTicks + Int(Double(milliseconds - startMilliseconds) / millisecondsPerTick + 0.5)
                let offset = Int(block * blockSize + lead - quantumStart)
                for track in 0..<sequence.tracks.count {
                    let events = sequence.tracks[track].events
                    let order = sequence.tracks[track].fileOrder
                    while playhead.cursor(ofTrack: track) < events.count {
                        let event = events[Int(order[playhead.cursor(ofTrack: track)])]
                        guard event.tick <= currentTicks else { break }
                        playhead.deliver(event.message, fromTrack: track, atFrameOffset: offset)
                    }
                }
                var tempoChanged = false
                while tempoCursor < tempos.count && tempos[tempoCursor].tick <= currentTicks {
                    millisecondsPerTick = FluidSynthPlayerTiming.millisecondsPerTick(
                        tempo: tempos[tempoCursor].microsecondsPerQuarterNote, ticksPerQuarterNote: ticksPerQuarterNote)
                    tempoCursor += 1
                    tempoChanged = true
                }
                if tempoChanged {
                    startMilliseconds = milliseconds
                    startTicks = currentTicks
                }
                if currentTicks >= sequence.lengthInTicks && playhead.isAtEnd {
                    let end = min(Int(applyAt - quantumStart), frameCount)
                    return ScheduledQuantum(positionSeconds: position, endFrameOffset: end)
                }
            }
            return ScheduledQuantum(positionSeconds: position)
        }
    }
}
