/// Where the reader puts a track's events as it reads them: an array (`MIDIFile.read`), or a
/// digest that keeps only what a summary needs (`MIDIFileSummary.read`). The reader's recovery
/// and diagnostics do not depend on the sink, so both see exactly the same events.
protocol TrackSink: Sendable {
    /// An empty sink for a track of at most `maximumEventCount` events.
    init(maximumEventCount: Int)
    /// Takes the next event of the track.
    mutating func append(_ event: MIDIFile.Event)
    /// Takes the next event of the track, a channel message given by its status byte (0x80-0xEF)
    /// and data bytes (0-127; `second` is 0 for a one-byte message). The reader's most common
    /// event: a sink may digest it without making the message.
    mutating func appendChannelMessage(tick: Int, status: UInt8, _ first: UInt8, _ second: UInt8)
    /// The tick of the last event taken, 0 before the first.
    var lastTick: Int { get }
}

extension TrackSink {
    mutating func appendChannelMessage(tick: Int, status: UInt8, _ first: UInt8, _ second: UInt8) {
        append(MIDIFile.Event(tick: tick, .channel(channelMessage(status, first, second))))
    }
}

extension Array: TrackSink where Element == MIDIFile.Event {
    /// Reserves room for every event the track can hold: it never regrows. Pages past the last
    /// event are never touched in a fresh mapping, so the slack costs address space, not memory.
    init(maximumEventCount: Int) {
        self.init()
        reserveCapacity(maximumEventCount)
    }

    var lastTick: Int { last?.tick ?? 0 }
}
