import MIDICore
import Sequencer

/// How a song's channels are shared out between synthesizers.
enum ChannelSplit {
    /// The voices a note starts (whether each loops, its release in seconds), for (channel,
    /// bank, program, key, velocity).
    typealias VoiceProbe = (_ channel: Int, _ bank: Int, _ program: Int, _ key: UInt8, _ velocity: UInt8) -> [(
        isLooped: Bool, releaseSeconds: Double
    )]

    /// How much work each channel gives the synthesizer, in voice-seconds: a looped voice sounds
    /// for its note (at most 8 s) and its release (at most 3 s), an unlooped one (a drum, a
    /// plucked sample) for the same but at most 1.5 s.
    static func channelLoads(of sequence: MusicSequence, voices probe: VoiceProbe) -> [Double] {
        var loads = [Double](repeating: 0, count: 16)
        struct Note: Hashable {
            var isDrumChannel: Bool
            var bank: Int
            var program: Int
            var key: UInt8
            var velocityBand: UInt8
        }
        var cache: [Note: [(isLooped: Bool, releaseSeconds: Double)]] = [:]
        for track in sequence.tracks {
            var started = [Double](repeating: -1, count: 16 * 128)
            var shapes = [[(isLooped: Bool, releaseSeconds: Double)]](repeating: [], count: 16 * 128)
            var bank = [Int](repeating: 0, count: 16)
            var program = [Int](repeating: 0, count: 16)
            func end(_ key: Int, at seconds: Double) {
                guard started[key] >= 0 else { return }
                let held = min(seconds - started[key], 8)
                for voice in shapes[key] {
                    let life = held + min(voice.releaseSeconds, 3)
                    loads[key / 128] += voice.isLooped ? life : min(life, 1.5)
                }
                started[key] = -1
            }
            for (index, event) in track.events.enumerated() {
                let seconds = track.eventSeconds[index]
                switch event.message {
                case .controlChange(let channel, 0, let value):
                    bank[Int(channel)] = Int(value)
                case .programChange(let channel, let value):
                    program[Int(channel)] = Int(value)
                case .noteOn(let channel, let note, let velocity) where velocity > 0:
                    let key = Int(channel) * 128 + Int(note)
                    end(key, at: seconds)
                    let cacheKey = Note(
                        isDrumChannel: channel == 9, bank: bank[Int(channel)], program: program[Int(channel)],
                        key: note, velocityBand: velocity / 16)
                    let voices =
                        cache[cacheKey]
                        ?? probe(Int(channel), bank[Int(channel)], program[Int(channel)], note, velocity)
                    cache[cacheKey] = voices
                    started[key] = seconds
                    shapes[key] = voices
                case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                    end(Int(channel) * 128 + Int(note), at: seconds)
                default:
                    break
                }
            }
            for key in started.indices { end(key, at: started[key] + 2) }
        }
        return loads
    }

    /// Channel sets for up to `parts` synthesizers (longest-processing-time first), or nil when
    /// the song cannot be split usefully: fewer than two channels play, or the busiest part
    /// would carry much more than its share.
    static func plan(for sequence: MusicSequence, parts: Int, voices: VoiceProbe) -> [Set<Int>]? {
        let loads = channelLoads(of: sequence, voices: voices)
        let playing = (0..<16).filter { loads[$0] > 0 }.sorted { loads[$0] > loads[$1] }
        let count = min(parts, playing.count)
        guard count > 1 else { return nil }
        var sets = [Set<Int>](repeating: [], count: count)
        var totals = [Double](repeating: 0, count: count)
        for channel in playing {
            let lightest = totals.indices.min { totals[$0] < totals[$1] }!
            sets[lightest].insert(channel)
            totals[lightest] += loads[channel]
        }
        let total = totals.reduce(0, +)
        guard totals.max()! <= total * (1 / Double(count) + 0.2) else { return nil }
        // Channels that only send controllers or programs go with the first part.
        for channel in 0..<16 where loads[channel] == 0 { sets[0].insert(channel) }
        return sets
    }
}
