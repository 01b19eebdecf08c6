import AudioGraph
import CJACK

// The JACK transport: the start, stop and place every client of the server shares (a DAW's
// play button). A following client reports it to its `transportFollower` at each cycle and is a
// slow-sync client, so the transport waits for it before rolling from a new place; a timebase
// master also publishes the bar grid (BBT) of its song.
extension JACKOutput {
    /// What a client does with the server's transport.
    public enum Transport: String, Sendable, Hashable, CaseIterable {
        /// Plays on its own: the transport is not looked at.
        case ignored
        /// Follows it: `transportFollower` plays while it rolls, from its place.
        case followed
        /// Follows it and is its timebase master: the bar, beat, tick and tempo every client
        /// reads come from `transportFollower.musicalPosition(atSeconds:)`.
        case timebaseMaster
    }

    /// The transport's state as a client sees it.
    public enum TransportState: String, Sendable, Hashable {
        /// Standing still.
        case stopped
        /// Playing: its frame advances with each cycle.
        case rolling
        /// Waiting for slow-sync clients to be ready before rolling.
        case starting
    }

    /// Where the server's transport is: its state and its place in seconds (its frame at the
    /// server's rate), and the bar grid when a timebase master publishes one. Any thread.
    public func transportPosition() -> (state: TransportState, seconds: Double, music: MusicalPosition?) {
        var position = jack_position_t()
        let state = api.pointee.transport_query(client, &position)
        var music: MusicalPosition?
        if position.valid.rawValue & JackPositionBBT.rawValue != 0 {
            music = MusicalPosition(
                bar: Int(position.bar), beat: Int(position.beat), tick: Int(position.tick),
                barStartTick: position.bar_start_tick, beatsPerBar: Double(position.beats_per_bar),
                beatType: Double(position.beat_type), ticksPerBeat: position.ticks_per_beat,
                beatsPerMinute: position.beats_per_minute)
        }
        return (Self.transportState(state), Double(position.frame) / sampleRate, music)
    }

    /// Starts the server's transport (every client's: what a DAW's play button does).
    public func startTransport() { api.pointee.transport_start(client) }
    /// Stops the server's transport.
    public func stopTransport() { api.pointee.transport_stop(client) }
    /// Moves the server's transport to `seconds` (a frame at the server's rate); rolling, it
    /// waits for slow-sync clients before going on from there.
    public func locateTransport(toSeconds seconds: Double) {
        _ = api.pointee.transport_locate(
            client, jack_nframes_t(clamping: Int((max(0, seconds) * sampleRate).rounded())))
    }

    private static func transportState(_ state: jack_transport_state_t) -> TransportState {
        switch state {
        case JackTransportRolling: .rolling
        case JackTransportStarting: .starting
        default: .stopped
        }
    }

    /// Tells the follower where the transport is at the start of this cycle (process thread).
    func reportTransport() {
        guard transport != .ignored, let follower = transportFollower else { return }
        var position = jack_position_t()
        let state = api.pointee.transport_query(client, &position)
        follower.transportCycle(
            isRolling: state == JackTransportRolling, seconds: Double(position.frame) / sampleRate,
            sampleTime: engine.currentSampleTime)
    }

    /// The slow-sync callback and, for a master, the timebase callback (both run on the process
    /// thread, and neither allocates, locks nor blocks); false when the server refused them.
    func installTransportCallbacks() -> Bool {
        guard transport != .ignored else { return true }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let sync = api.pointee.set_sync_callback(
            client,
            { _, position, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                guard output.isRunning, let follower = output.transportFollower, let position else { return 1 }
                return follower.isReadyToRoll(from: Double(position.pointee.frame) / output.sampleRate) ? 1 : 0
            }, context)
        guard sync == 0 else { return false }
        guard transport == .timebaseMaster else { return true }
        return api.pointee.set_timebase_callback(
            client, 0,
            { _, _, position, _, argument in
                let output = Unmanaged<JACKOutput>.fromOpaque(argument!).takeUnretainedValue()
                guard let position, let follower = output.transportFollower,
                    let music = follower.musicalPosition(atSeconds: Double(position.pointee.frame) / output.sampleRate)
                else { return }
                position.pointee.valid = jack_position_bits_t(
                    rawValue: position.pointee.valid.rawValue | JackPositionBBT.rawValue)
                position.pointee.bar = Int32(clamping: music.bar)
                position.pointee.beat = Int32(clamping: music.beat)
                position.pointee.tick = Int32(clamping: music.tick)
                position.pointee.tick_double = Double(music.tick)
                position.pointee.bar_start_tick = music.barStartTick
                position.pointee.beats_per_bar = Float(music.beatsPerBar)
                position.pointee.beat_type = Float(music.beatType)
                position.pointee.ticks_per_beat = music.ticksPerBeat
                position.pointee.beats_per_minute = music.beatsPerMinute
            }, context) == 0
    }
}
