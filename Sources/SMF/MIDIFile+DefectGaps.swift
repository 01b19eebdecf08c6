import MIDICore

extension MIDIFile {
    /// A stretch of silence that only a damaged delta time made: nothing happens in any track
    /// between `tick` and `tick + ticks`, no note sounds across it, and the delta time that
    /// leads over it is beyond 2^23 ticks (what the reader flags as `hugeDeltaTime`).
    public struct DefectGap: Hashable, Sendable {
        /// The track whose delta time leads over the gap (0-based among the tracks).
        public var track: Int
        /// Where the gap starts (the tick of the event before the damaged delta).
        public var tick: Int
        /// How long the gap is, in ticks.
        public var ticks: Int
    }

    /// This file without the silences only damaged delta times made (each one's delta becomes 0,
    /// and everything after it comes that much sooner in every track), and the gaps cut. A gap
    /// in which another track has events, or across which a note sounds, is music, not a defect:
    /// it stays.
    public func cuttingDefectGaps() -> (file: MIDIFile, cuts: [DefectGap]) {
        let huge = 1 << 23
        // Every event's tick, sorted, to find whether anything happens inside a gap.
        let ticks = tracks.flatMap { $0.events.map(\.tick) }.sorted()
        var candidates: [DefectGap] = []
        for (index, track) in tracks.enumerated() {
            var previous = 0
            for event in track.events {
                if event.tick - previous > huge {
                    candidates.append(DefectGap(track: index, tick: previous, ticks: event.tick - previous))
                }
                previous = event.tick
            }
        }
        guard !candidates.isEmpty else { return (self, []) }
        var cuts: [DefectGap] = []
        for gap in candidates.sorted(by: { $0.tick < $1.tick }) {
            // The first event after the gap's start must be at its end.
            let next = Self.firstIndex(in: ticks, above: gap.tick)
            guard next < ticks.count, ticks[next] >= gap.tick + gap.ticks else { continue }
            guard !notesSound(across: gap.tick) else { continue }
            guard !cuts.contains(where: { $0.tick == gap.tick }) else { continue }
            cuts.append(gap)
        }
        guard !cuts.isEmpty else { return (self, []) }
        var result = self
        for index in result.tracks.indices {
            for event in result.tracks[index].events.indices {
                let tick = result.tracks[index].events[event].tick
                let removed = cuts.reduce(0) { $0 + (tick >= $1.tick + $1.ticks ? $1.ticks : 0) }
                result.tracks[index].events[event].tick = tick - removed
            }
        }
        return (result, cuts)
    }

    /// Whether a note started at or before `tick` is still held after it (in any track).
    private func notesSound(across tick: Int) -> Bool {
        var held = [Int](repeating: 0, count: 16 * 128)
        for track in tracks {
            for event in track.events {
                guard event.tick <= tick else { break }
                guard case .channel(let message) = event.payload else { continue }
                switch message {
                case .noteOn(let channel, let note, let velocity) where velocity > 0:
                    held[Int(channel & 15) * 128 + Int(note & 127)] += 1
                case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                    let key = Int(channel & 15) * 128 + Int(note & 127)
                    held[key] = max(0, held[key] - 1)
                default:
                    break
                }
            }
        }
        return held.contains { $0 > 0 }
    }

    /// The index of the first element of sorted `ticks` greater than `tick`.
    private static func firstIndex(in ticks: [Int], above tick: Int) -> Int {
        var low = 0
        var high = ticks.count
        while low < high {
            let middle = (low + high) / 2
            if ticks[middle] > tick { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
