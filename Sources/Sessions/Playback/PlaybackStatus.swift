import JACKIO
import Sequencer

/// Where a playback session is, for a status line or a UI.
public struct PlaybackStatus: Sendable, Hashable {
    /// Whether the song plays rather than being paused (still true once it has ended); false with no song.
    public var isPlaying: Bool
    /// The song position in seconds of song time (0 with no song).
    public var positionSeconds: Double
    /// The song's length in seconds, to its last event (0 with no song).
    public var durationSeconds: Double
    /// 1-based, from the song's time signatures.
    public var bar: Int
    /// The beat in the bar, 1-based.
    public var beat: Int
    /// The tempo at this point as it sounds: times the speed, and the rate of a varispeed or
    /// time-pitch among the effects.
    public var beatsPerMinute: Double
    /// Synthesizer voices sounding at the end of the last rendered quantum.
    public var voiceCount: Int
    /// The highest sample level since the previous status (linear, 0 for silence).
    public var peak: Float
    /// Output underruns (xruns) the device recovered from so far.
    public var underruns: Int
    /// The line of lyrics being sung: its syllables since the last line break, up to now.
    public var lyricLine: String
    /// The JACK transport's state when the session follows it (nil otherwise).
    public var transport: JACKOutput.TransportState?

    init(
        player: MusicPlayer?, speed: Double, voiceCount: Int, peak: Float, underruns: Int,
        transport: JACKOutput.TransportState? = nil
    ) {
        self.transport = transport
        self.voiceCount = voiceCount
        self.peak = peak
        self.underruns = underruns
        guard let player else {
            (isPlaying, positionSeconds, durationSeconds, bar, beat, beatsPerMinute, lyricLine) =
                (false, 0, 0, 1, 1, 0, "")
            return
        }
        let sequence = player.sequence
        let map = sequence.tempoMap
        isPlaying = player.isPlaying
        positionSeconds = player.currentPositionInSeconds
        durationSeconds = sequence.durationSeconds
        let tick = Int(map.tick(forSeconds: positionSeconds))
        (bar, beat, _) = map.barBeat(forTick: tick)
        beatsPerMinute = 60_000_000 / Double(map.microsecondsPerQuarterNote(atTick: tick)) * speed
        let sung = sequence.lyrics.prefix { $0.tick <= tick }
        let lineStart =
            sung.lastIndex { $0.text.hasPrefix(" ") || $0.text.hasSuffix("\n") || $0.text.hasSuffix("\r") }
            ?? sung.startIndex
        lyricLine = String(sung[lineStart...].map(\.text).joined().trimmingWhitespace())
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
