/// Converts between ticks, seconds and bars:beats for one file, with tempo changes found in any
/// track and time signatures for the bar grid.
///
/// With a PPQN division, time follows the Set Tempo events (120 BPM until the first one). With an
/// SMPTE division, ticks are a fixed fraction of a second and tempo events are ignored, as the
/// SMF specification says. A tempo of 0 is ignored (the reader reports it).
public struct TempoMap: Hashable, Sendable {
    /// A tempo in force from `tick` on, with the time in seconds at that tick.
    public struct TempoChange: Hashable, Sendable, Codable {
        /// The tick at which this tempo takes effect.
        public var tick: Int
        /// The time at `tick`, in seconds from the start of the file.
        public var seconds: Double
        /// The tempo in microseconds per quarter note, as Set Tempo gives it (500 000 is 120 BPM).
        public var microsecondsPerQuarterNote: Int
        /// The tempo in quarter notes per minute. Computed, so not part of the encoded form.
        public var beatsPerMinute: Double { 60_000_000 / Double(microsecondsPerQuarterNote) }
    }

    /// A time signature in force from `tick` on, with the bar number (0-based) at that tick.
    public struct MeterChange: Hashable, Sendable {
        /// The tick at which this meter takes effect: the first bar line at or after its Time Signature
        /// event (the event's own tick when it falls on a bar line, the usual case).
        public var tick: Int
        /// The bar number at `tick`, 0-based (`barBeat(forTick:)` counts from 1).
        public var bar: Int
        /// Beats per bar, the time signature's upper number.
        public var numerator: Int
        /// The beat's note value, the lower number: 4 for quarter notes, 8 for eighths.
        public var denominator: Int
    }

    /// The file's time division, which sets how long a tick is.
    public let division: MIDIFile.Division
    /// Tempo segments in tick order; the first always starts at tick 0.
    public let tempoChanges: [TempoChange]
    /// Time signatures in tick order; the first is at tick 0 (4/4 when the file sets none there).
    public let meterChanges: [MeterChange]

    /// The tempo before the first Set Tempo event: 500 000 µs per quarter note, 120 BPM.
    public static let defaultMicrosecondsPerQuarterNote = 500_000

    /// Builds the map from the Set Tempo and Time Signature events of every track. Tempos of 0 and
    /// time signatures with a numerator of 0 are skipped; of two at one tick, the one read last wins.
    public init(file: MIDIFile) {
        var tempos: [(Int, Int)] = []
        var meters: [(Int, Int, Int)] = []
        for track in file.tracks {
            for event in track.events {
                guard case .meta(let meta) = event.payload else { continue }
                switch meta {
                case .tempo(let tempo) where tempo > 0: tempos.append((event.tick, tempo))
                case .timeSignature(let numerator, let power, _, _) where numerator > 0 && power < 31:
                    meters.append((event.tick, Int(numerator), 1 << Int(power)))
                default: break
                }
            }
        }
        self.init(division: file.division, tempos: tempos, meters: meters)
    }

    /// A map from explicit (tick, µs per quarter) tempos and (tick, numerator, denominator) meters.
    public init(
        division: MIDIFile.Division, tempos: [(tick: Int, microsecondsPerQuarterNote: Int)],
        meters: [(tick: Int, numerator: Int, denominator: Int)] = []
    ) {
        self.division = division
        // Stable sort by tick; at equal ticks the last event wins (it was read last).
        let sortedTempos = tempos.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(
            \.element)
        var changes = [
            TempoChange(tick: 0, seconds: 0, microsecondsPerQuarterNote: Self.defaultMicrosecondsPerQuarterNote)
        ]
        let ticksPerQuarter = Double(division.ticksPerQuarterNote ?? 1)
        for (tick, tempo) in sortedTempos {
            let last = changes[changes.count - 1]
            if tick == last.tick {
                changes[changes.count - 1].microsecondsPerQuarterNote = tempo
                continue
            }
            let seconds =
                last.seconds + Double(tick - last.tick) * Double(last.microsecondsPerQuarterNote) / 1_000_000
                / ticksPerQuarter
            changes.append(TempoChange(tick: tick, seconds: seconds, microsecondsPerQuarterNote: tempo))
        }
        tempoChanges = changes

        let sortedMeters = meters.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(
            \.element)
        var meterList = [MeterChange(tick: 0, bar: 0, numerator: 4, denominator: 4)]
        let quarter = division.ticksPerQuarterNote ?? 480
        for (tick, numerator, denominator) in sortedMeters {
            let last = meterList[meterList.count - 1]
            let barTicks = max(1, last.numerator * quarter * 4 / last.denominator)
            // A meter change takes effect at the start of the bar it falls in (or at its tick when
            // it falls on a bar line, the usual case).
            let bars = (tick - last.tick + barTicks - 1) / barTicks
            if tick == last.tick {
                meterList[meterList.count - 1].numerator = numerator
                meterList[meterList.count - 1].denominator = denominator
            } else {
                meterList.append(
                    MeterChange(
                        tick: last.tick + bars * barTicks, bar: last.bar + bars, numerator: numerator,
                        denominator: denominator))
            }
        }
        meterChanges = meterList
    }

    /// Seconds from the start of the file at `tick`.
    public func seconds(forTick tick: Double) -> Double {
        switch division {
        case .smpte(let fps, let ticksPerFrame):
            return tick / (Self.framesPerSecond(fps) * Double(ticksPerFrame))
        case .ticksPerQuarterNote(let ppq):
            let change = tempoChanges[segment(forTick: tick)]
            return change.seconds + (tick - Double(change.tick)) * Double(change.microsecondsPerQuarterNote) / 1_000_000
                / Double(ppq)
        }
    }

    /// Seconds from the start of the file at a whole `tick`.
    public func seconds(forTick tick: Int) -> Double { seconds(forTick: Double(tick)) }

    /// The (fractional) tick at `seconds` from the start.
    public func tick(forSeconds seconds: Double) -> Double {
        switch division {
        case .smpte(let fps, let ticksPerFrame):
            return seconds * Self.framesPerSecond(fps) * Double(ticksPerFrame)
        case .ticksPerQuarterNote(let ppq):
            var low = 0
            var high = tempoChanges.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if tempoChanges[middle].seconds <= seconds { low = middle } else { high = middle - 1 }
            }
            let change = tempoChanges[low]
            return Double(change.tick) + (seconds - change.seconds) * 1_000_000 * Double(ppq)
                / Double(change.microsecondsPerQuarterNote)
        }
    }

    /// Quarter-note beats at `tick` (for SMPTE files, beats at the default 120 BPM).
    public func beats(forTick tick: Double) -> Double {
        switch division {
        case .ticksPerQuarterNote(let ppq): return tick / Double(ppq)
        case .smpte: return seconds(forTick: tick) * 2
        }
    }

    /// Bar and beat (both 1-based, as musicians count) and the ticks into the beat, at `tick`;
    /// beats follow the time signature's denominator.
    public func barBeat(forTick tick: Int) -> (bar: Int, beat: Int, ticks: Int) {
        let quarter = division.ticksPerQuarterNote ?? 480
        let meter = meter(atTick: tick)
        let beatTicks = max(1, quarter * 4 / meter.denominator)
        let barTicks = beatTicks * meter.numerator
        let offset = max(0, tick - meter.tick)
        return (meter.bar + offset / barTicks + 1, offset % barTicks / beatTicks + 1, offset % beatTicks)
    }

    /// The time signature in force at `tick` (found by bisection: safe on an audio thread).
    public func meter(atTick tick: Int) -> MeterChange {
        var low = 0
        var high = meterChanges.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if meterChanges[middle].tick <= tick { low = middle } else { high = middle - 1 }
        }
        return meterChanges[low]
    }

    /// The tempo (µs per quarter note) in force at `tick`.
    public func microsecondsPerQuarterNote(atTick tick: Int) -> Int {
        tempoChanges[segment(forTick: Double(tick))].microsecondsPerQuarterNote
    }

    private func segment(forTick tick: Double) -> Int {
        var low = 0
        var high = tempoChanges.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Double(tempoChanges[middle].tick) <= tick { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// SMPTE frame rate for a division's frames-per-second field (29 means 30 drop-frame, 29.97).
    public static func framesPerSecond(_ field: Int) -> Double { field == 29 ? 30_000.0 / 1_001.0 : Double(field) }
}

extension MIDIFile.Division {
    /// Ticks per quarter note, nil for SMPTE divisions.
    public var ticksPerQuarterNote: Int? {
        if case .ticksPerQuarterNote(let ticks) = self { return ticks }
        return nil
    }
}

extension MIDIFile {
    /// The file's tempo map.
    public var tempoMap: TempoMap { TempoMap(file: self) }

    /// The tick at which the last track ends.
    public var lengthInTicks: Int { tracks.map(\.length).max() ?? 0 }

    /// Duration in seconds: to the end of the longest track (format 0/1), or the sum of the
    /// sequences (format 2, which plays them one after the other).
    public var durationSeconds: Double {
        if format == .multiSequence {
            return tracks.reduce(0) { total, track in
                total
                    + TempoMap(file: MIDIFile(format: .multiSequence, division: division, tracks: [track])).seconds(
                        forTick: track.length)
            }
        }
        return tempoMap.seconds(forTick: lengthInTicks)
    }
}
