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
public struct FluidSynthPlayerTiming: EventTimingPolicy {
    /// The policy; it has no options (each player gets a scheduler of its own from `makeScheduler(for:)`).
    public init() {}

    public var passesNotesThrough: Bool { true }

    /// A scheduler for files timed in ticks per quarter note; SMPTE-timed files play with the
    /// player's own timing.
    public func makeScheduler(for sequence: MusicSequence) -> (any EventScheduler)? {
        guard let ticks = sequence.tempoMap.division.ticksPerQuarterNote else { return nil }
        return Scheduler(sequence: sequence, ticksPerQuarterNote: ticks)
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

        init(sequence: MusicSequence, ticksPerQuarterNote: Int) {
            self.sequence = sequence
            self.ticksPerQuarterNote = ticksPerQuarterNote
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
            // Block b's events take effect at 64·(b+1); handle the blocks whose effect falls here.
            var block = max(0, (quantumStart - 1) / blockSize)
            while (block + 1) * blockSize < quantumEnd {
                let applyAt = (block + 1) * blockSize
                defer { block += 1 }
                guard applyAt >= quantumStart else { continue }
                let milliseconds = Int(1_000 * Double(block * blockSize) / sampleRate)
                let currentTicks =
                    startTicks + Int(Double(milliseconds - startMilliseconds) / millisecondsPerTick + 0.5)
                let offset = Int(applyAt - quantumStart)
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
                    return ScheduledQuantum(positionSeconds: position, endFrameOffset: offset)
                }
            }
            return ScheduledQuantum(positionSeconds: position)
        }
    }
}
