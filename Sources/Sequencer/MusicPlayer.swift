import AudioGraph
import MIDICore
import SMF
import Synchronization

/// Plays a `MusicSequence` into MIDI-receiving nodes, driven by the engine's render: before each
/// quantum it turns the quantum's frames into song time through the tempo map and hands every due
/// event to its destination at its exact frame offset. No wall-clock timer decides when a note
/// plays, so an offline render and a device stream get the same events at the same frames.
///
/// Transport calls (`play`, `pause`, `seek`, `rate` …) come from any thread and take effect at the
/// next quantum. Seeking chases programs, controllers, pitch bend and pressure so that playing
/// from the middle sounds as it would have; pausing, stopping, seeking and looping release every
/// note the player started, so no note is left hanging.
public final class MusicPlayer: RenderObserver, @unchecked Sendable {
    public let sequence: MusicSequence
    private let destinations: [any MIDIReceivingNode]
    private let trackDestination: [Int]
    private let sampleRate: Double

    // MARK: Control → render mailbox (the render thread only ever try-locks it)

    private struct Mailbox {
        var seek: SeekPlan?
        var consumedSeek: SeekPlan?
        var playing: Bool?
        var rate: Double?
        var transpose: Int?
        var loop: LoopSetting?
        var trackEnabled: [Bool]?
        var consumedTrackEnabled: [Bool]?
        var releaseNotes = false
    }

    struct LoopSetting {
        var startSeconds: Double
        var endSeconds: Double
        var count: Int  // -1: forever
    }

    final class SeekPlan: @unchecked Sendable {
        let seconds: Double
        let cursors: [Int]
        let chase: [(destination: Int, message: MIDIMessage)]
        init(seconds: Double, cursors: [Int], chase: [(destination: Int, message: MIDIMessage)]) {
            self.seconds = seconds
            self.cursors = cursors
            self.chase = chase
        }
    }

    private let mailbox = Mutex(Mailbox())
    private let positionBits = Atomic<UInt64>(0)
    private let playingFlag = Atomic<Bool>(false)
    private let finishedFlag = Atomic<Bool>(false)
    private let loopsDone = Atomic<Int>(0)
    private let controlState = Mutex(ControlState())

    private struct ControlState {
        var rate = 1.0
        var transpose = 0
        var loop: LoopSetting?
        var muted: [Bool] = []
        var soloed: [Bool] = []
    }

    // MARK: Render-thread state

    private var cursors: [Int]
    private var trackEnabled: [Bool]
    private var activeKeys: [Int16]  // per destination × channel × key: sounding key + 1, or 0
    private var renderPlaying = false
    private var anchorSample: Int64 = 0
    private var anchorSeconds = 0.0
    private var renderRate = 1.0
    private var renderTranspose = 0
    private var loop: LoopSetting?
    private var loopsRemaining = 0
    private var heldSeek: SeekPlan?
    private var heldTrackEnabled: [Bool]?
    private var needsAnchor = true

    /// When events take effect.
    public enum Timing: Sendable, Hashable {
        /// Every event at its exact frame (the synthesizer may still start voices at its own
        /// 64-frame block boundary).
        case sampleAccurate
        /// As FluidSynth's own MIDI player places them: song time read once per 64-frame block,
        /// truncated to whole milliseconds and rounded to ticks, events applied one block later.
        /// For renders that must match `fluidsynth -F` sample for sample; loops, rate changes and
        /// seeks are not supported in this mode (it plays from the start at rate 1).
        case fluidSynthCompatible
    }

    /// How events are placed in time; set it before `play()`.
    public let timing: Timing

    /// A player for `sequence`; tracks without a destination play into `destination`.
    public init(
        sequence: MusicSequence, destination: any MIDIReceivingNode, sampleRate: Double,
        timing: Timing = .sampleAccurate
    ) {
        self.timing = timing
        self.sequence = sequence
        var nodes: [any MIDIReceivingNode] = [destination]
        var map: [Int] = []
        for track in sequence.tracks {
            if let node = track.destination {
                if let index = nodes.firstIndex(where: { $0 === node }) {
                    map.append(index)
                } else {
                    nodes.append(node)
                    map.append(nodes.count - 1)
                }
            } else {
                map.append(0)
            }
        }
        destinations = nodes
        trackDestination = map
        self.sampleRate = sampleRate
        cursors = [Int](repeating: 0, count: sequence.tracks.count)
        trackEnabled = [Bool](repeating: true, count: sequence.tracks.count)
        activeKeys = [Int16](repeating: 0, count: nodes.count * 16 * 128)
        controlState.withLock {
            $0.muted = [Bool](repeating: false, count: sequence.tracks.count)
            $0.soloed = [Bool](repeating: false, count: sequence.tracks.count)
        }
    }

    // MARK: Transport (any thread)

    /// Starts or resumes playback at the current position (chasing controllers).
    public func play() {
        let seek = makeSeekPlan(seconds: currentPositionInSeconds)
        mailbox.withLock {
            $0.consumedSeek = nil
            $0.seek = seek
            $0.playing = true
        }
        playingFlag.store(true, ordering: .relaxed)
        finishedFlag.store(false, ordering: .relaxed)
    }

    /// Pauses, releasing sounding notes; `play()` resumes from here.
    public func pause() {
        mailbox.withLock {
            $0.playing = false
            $0.releaseNotes = true
        }
        playingFlag.store(false, ordering: .relaxed)
    }

    /// Stops and returns to the start.
    public func stop() {
        pause()
        seek(toSeconds: 0)
    }

    /// Moves to `seconds` from the start of the sequence, chasing programs and controllers.
    public func seek(toSeconds seconds: Double) {
        let target = min(max(0, seconds), sequence.durationSeconds)
        let plan = makeSeekPlan(seconds: target)
        mailbox.withLock {
            $0.consumedSeek = nil
            $0.seek = plan
        }
        positionBits.store(target.bitPattern, ordering: .relaxed)
        if target < sequence.durationSeconds { finishedFlag.store(false, ordering: .relaxed) }
    }

    public func seek(toBeats beats: Double) { seek(toSeconds: sequence.seconds(forBeats: beats)) }

    public var isPlaying: Bool { playingFlag.load(ordering: .relaxed) }
    /// True once playback reached the end of the sequence (after any loops).
    public var isFinished: Bool { finishedFlag.load(ordering: .relaxed) }

    /// Song position in seconds (updated every quantum).
    public var currentPositionInSeconds: Double {
        get { Double(bitPattern: positionBits.load(ordering: .relaxed)) }
        set { seek(toSeconds: newValue) }
    }

    public var currentPositionInBeats: Double {
        get { sequence.beats(forSeconds: currentPositionInSeconds) }
        set { seek(toBeats: newValue) }
    }

    /// Playback rate: 2 plays twice as fast (the tempo factor).
    public var rate: Double {
        get { controlState.withLock { $0.rate } }
        set {
            let value = min(max(newValue, 0.01), 100)
            controlState.withLock { $0.rate = value }
            mailbox.withLock { $0.rate = value }
        }
    }

    /// Semitones added to every note outside the drum channel (10).
    public var transpose: Int {
        get { controlState.withLock { $0.transpose } }
        set {
            controlState.withLock { $0.transpose = newValue }
            mailbox.withLock {
                $0.transpose = newValue
                $0.releaseNotes = true
            }
        }
    }

    /// Loops `range` (seconds) `count` times (-1: forever); nil stops looping.
    public func setLoop(_ range: Range<Double>?, count: Int = -1) {
        let setting = range.map {
            LoopSetting(
                startSeconds: max(0, $0.lowerBound), endSeconds: min($0.upperBound, sequence.durationSeconds),
                count: count)
        }
        controlState.withLock { $0.loop = setting }
        mailbox.withLock { $0.loop = setting ?? LoopSetting(startSeconds: 0, endSeconds: 0, count: 0) }
    }

    /// How many times playback has jumped back to the loop start.
    public var completedLoopCount: Int { loopsDone.load(ordering: .relaxed) }

    public func setMuted(_ muted: Bool, track: Int) { updateTracks { $0.muted[track] = muted } }
    public func setSoloed(_ soloed: Bool, track: Int) { updateTracks { $0.soloed[track] = soloed } }

    private func updateTracks(_ change: (inout ControlState) -> Void) {
        let enabled = controlState.withLock { state -> [Bool] in
            change(&state)
            let anySolo = state.soloed.contains(true)
            return zip(state.muted, state.soloed).map { muted, soloed in !muted && (!anySolo || soloed) }
        }
        mailbox.withLock {
            $0.consumedTrackEnabled = nil
            $0.trackEnabled = enabled
            $0.releaseNotes = true
        }
    }

    /// The state at `seconds`: each track's next event, and the messages that recreate every
    /// channel's program, controllers, pitch bend and pressure (built on the calling thread).
    private func makeSeekPlan(seconds: Double) -> SeekPlan {
        var cursors: [Int] = []
        var chase: [(Int, MIDIMessage)] = []
        struct Channel {
            var bank: (UInt8?, UInt8?) = (nil, nil)
            var program: UInt8?
            var controllers = [UInt8?](repeating: nil, count: 120)
            var rpn: [UInt16: (UInt8?, UInt8?)] = [:]
            var selectedRPN: UInt16?
            var pitchBend: UInt16?
            var pressure: UInt8?
        }
        var channels = [[Channel]](repeating: [Channel](repeating: Channel(), count: 16), count: destinations.count)
        for (trackIndex, track) in sequence.tracks.enumerated() {
            var low = 0
            var high = track.eventSeconds.count
            while low < high {
                let middle = (low + high) / 2
                if track.eventSeconds[middle] < seconds { low = middle + 1 } else { high = middle }
            }
            cursors.append(low)
            let destination = trackDestination[trackIndex]
            for event in track.events[0..<low] {
                switch event.message {
                case .programChange(let channel, let program):
                    channels[destination][Int(channel)].program = program
                case .controlChange(let channel, let controller, let value):
                    var state = channels[destination][Int(channel)]
                    switch controller {
                    case 0: state.bank.0 = value
                    case 32: state.bank.1 = value
                    case 101: state.selectedRPN = UInt16(value) << 7 | (state.selectedRPN ?? 0x7F) & 0x7F
                    case 100: state.selectedRPN = (state.selectedRPN ?? 0x3F80) & 0x3F80 | UInt16(value)
                    case 6:
                        if let rpn = state.selectedRPN, rpn != 0x3FFF { state.rpn[rpn, default: (nil, nil)].0 = value }
                    case 38:
                        if let rpn = state.selectedRPN, rpn != 0x3FFF { state.rpn[rpn, default: (nil, nil)].1 = value }
                    case 98, 99: state.selectedRPN = 0x3FFF  // NRPNs are not chased
                    case 96, 97: break
                    case 120...127: break
                    default: state.controllers[Int(controller)] = value
                    }
                    channels[destination][Int(channel)] = state
                case .pitchBend(let channel, let value):
                    channels[destination][Int(channel)].pitchBend = value
                case .channelPressure(let channel, let pressure):
                    channels[destination][Int(channel)].pressure = pressure
                case .systemExclusive:
                    chase.append((destination, event.message))
                default:
                    break
                }
            }
        }
        for (destination, states) in channels.enumerated() {
            for (index, state) in states.enumerated() {
                let channel = UInt8(index)
                if let msb = state.bank.0 {
                    chase.append((destination, .controlChange(channel: channel, controller: 0, value: msb)))
                }
                if let lsb = state.bank.1 {
                    chase.append((destination, .controlChange(channel: channel, controller: 32, value: lsb)))
                }
                if let program = state.program {
                    chase.append((destination, .programChange(channel: channel, program: program)))
                }
                for (controller, value) in state.controllers.enumerated() {
                    if let value {
                        chase.append(
                            (destination, .controlChange(channel: channel, controller: UInt8(controller), value: value))
                        )
                    }
                }
                for (rpn, data) in state.rpn.sorted(by: { $0.key < $1.key }) {
                    chase.append(
                        (destination, .controlChange(channel: channel, controller: 101, value: UInt8(rpn >> 7))))
                    chase.append(
                        (destination, .controlChange(channel: channel, controller: 100, value: UInt8(rpn & 0x7F))))
                    if let msb = data.0 {
                        chase.append((destination, .controlChange(channel: channel, controller: 6, value: msb)))
                    }
                    if let lsb = data.1 {
                        chase.append((destination, .controlChange(channel: channel, controller: 38, value: lsb)))
                    }
                }
                if let selected = state.selectedRPN {
                    chase.append(
                        (destination, .controlChange(channel: channel, controller: 101, value: UInt8(selected >> 7))))
                    chase.append(
                        (destination, .controlChange(channel: channel, controller: 100, value: UInt8(selected & 0x7F))))
                }
                if let bend = state.pitchBend { chase.append((destination, .pitchBend(channel: channel, value: bend))) }
                if let pressure = state.pressure {
                    chase.append((destination, .channelPressure(channel: channel, pressure: pressure)))
                }
            }
        }
        return SeekPlan(seconds: seconds, cursors: cursors, chase: chase)
    }

    // MARK: Render thread

    public func willRender(frameCount: Int, at time: AudioTime) {
        takeMail(at: time)
        guard renderPlaying else { return }
        if timing == .fluidSynthCompatible, let ticksPerQuarter = sequence.tempoMap.division.ticksPerQuarterNote {
            renderWithFluidSynthTiming(frameCount: frameCount, at: time, ticksPerQuarter: ticksPerQuarter)
            return
        }
        if needsAnchor {
            anchorSample = time.sampleTime
            needsAnchor = false
        }
        var start = time.sampleTime
        let end = time.sampleTime + Int64(frameCount)
        while start < end {
            // Where the current pass ends: the quantum's end or the loop point.
            var passEnd = end
            var loopPoint: Int64? = nil
            if let loop, loopsRemaining != 0, loop.endSeconds > loop.startSeconds {
                let loopSample = sample(forSeconds: loop.endSeconds)
                if loopSample < end {
                    loopPoint = max(loopSample, start)
                    passEnd = loopPoint!
                }
            }
            deliver(until: passEnd, quantumStart: time.sampleTime)
            if let loopPoint, let loop {
                releaseAllNotes(atFrameOffset: Int(loopPoint - time.sampleTime))
                anchorSample = loopPoint
                anchorSeconds = loop.startSeconds
                positionCursors(atSeconds: loop.startSeconds)
                if loopsRemaining > 0 { loopsRemaining -= 1 }
                loopsDone.add(1, ordering: .relaxed)
                start = loopPoint
                if loopPoint == end { break }
                continue
            }
            start = passEnd
        }
        let position = secondsAt(sample: end)
        positionBits.store(min(position, sequence.durationSeconds).bitPattern, ordering: .relaxed)
        if position >= sequence.durationSeconds
            && cursors.indices.allSatisfy({ cursors[$0] >= sequence.tracks[$0].events.count })
        {
            renderPlaying = false
            releaseAllNotes(atFrameOffset: frameCount - 1)
            playingFlag.store(false, ordering: .relaxed)
            finishedFlag.store(true, ordering: .relaxed)
        }
    }

    // FluidSynth player emulation state (render thread).
    private var fluidStartMilliseconds = 0
    private var fluidStartTicks = 0
    private var fluidMillisecondsPerTick = 0.0
    private var fluidTempoCursor = 0
    private var fluidBlocksStarted = false

    /// FluidSynth 2.x's player, step by step: before each 64-frame block it reads the sample
    /// clock as whole milliseconds, converts them to ticks (rounding to nearest) from the last
    /// tempo anchor, and sends every event up to that tick, track after track; the synthesizer
    /// applies them at the start of the next block. A tempo event re-anchors at the block's
    /// millisecond and tick.
    private func renderWithFluidSynthTiming(frameCount: Int, at time: AudioTime, ticksPerQuarter: Int) {
        let blockSize: Int64 = 64
        if !fluidBlocksStarted {
            fluidBlocksStarted = true
            fluidStartMilliseconds = 0
            fluidStartTicks = 0
            fluidMillisecondsPerTick = Self.fluidMillisecondsPerTick(500_000, ticksPerQuarter)
            fluidTempoCursor = 0
            for index in 0..<cursors.count { cursors[index] = 0 }
        }
        let tempos = sequence.tempoMap.tempoChanges
        let quantumStart = time.sampleTime
        let quantumEnd = time.sampleTime + Int64(frameCount)
        // Block b's events take effect at 64·(b+1); handle the blocks whose effect falls here.
        var block = max(0, (quantumStart - 1) / blockSize)
        while (block + 1) * blockSize < quantumEnd {
            let applyAt = (block + 1) * blockSize
            defer { block += 1 }
            guard applyAt >= quantumStart else { continue }
            let milliseconds = Int(1_000 * Double(block * blockSize) / sampleRate)
            let currentTicks =
                fluidStartTicks + Int(Double(milliseconds - fluidStartMilliseconds) / fluidMillisecondsPerTick + 0.5)
            let offset = Int(applyAt - quantumStart)
            for track in 0..<cursors.count {
                let events = sequence.tracks[track].events
                let order = sequence.tracks[track].fileOrder
                while cursors[track] < events.count && events[Int(order[cursors[track]])].tick <= currentTicks {
                    let message = events[Int(order[cursors[track]])].message
                    cursors[track] += 1
                    if trackEnabled[track] {
                        sendAsFluidSynth(message, to: trackDestination[track], atFrameOffset: offset)
                    }
                }
            }
            var tempoChanged = false
            while fluidTempoCursor < tempos.count && tempos[fluidTempoCursor].tick <= currentTicks {
                fluidMillisecondsPerTick = Self.fluidMillisecondsPerTick(
                    tempos[fluidTempoCursor].microsecondsPerQuarterNote, ticksPerQuarter)
                fluidTempoCursor += 1
                tempoChanged = true
            }
            if tempoChanged {
                fluidStartMilliseconds = milliseconds
                fluidStartTicks = currentTicks
            }
            if currentTicks >= sequence.lengthInTicks
                && cursors.indices.allSatisfy({ cursors[$0] >= sequence.tracks[$0].events.count })
            {
                renderPlaying = false
                releaseAllNotes(atFrameOffset: offset)
                playingFlag.store(false, ordering: .relaxed)
                finishedFlag.store(true, ordering: .relaxed)
                break
            }
        }
        positionBits.store(
            min(Double(quantumEnd) / sampleRate, sequence.durationSeconds).bitPattern, ordering: .relaxed)
    }

    /// FluidSynth keeps milliseconds per tick in single precision: `(float)tempo / division / 1000.0`
    /// stored in a float. The rounding matters: it decides which block some events fall in.
    static func fluidMillisecondsPerTick(_ tempo: Int, _ division: Int) -> Double {
        Double(Float(Double(Float(tempo) / Float(division)) / 1_000))
    }

    private func secondsAt(sample: Int64) -> Double {
        anchorSeconds + Double(sample - anchorSample) / sampleRate * renderRate
    }

    private func sample(forSeconds seconds: Double) -> Int64 {
        anchorSample + Int64(((seconds - anchorSeconds) * sampleRate / renderRate).rounded())
    }

    /// Hands every event due before `limit` to its destination, merged across tracks in time
    /// order (note-offs first at equal times, as the tracks are sorted).
    private func deliver(until limit: Int64, quantumStart: Int64) {
        while true {
            var best = -1
            var bestSample = Int64.max
            var bestClass = Int.max
            for track in 0..<cursors.count {
                let cursor = cursors[track]
                let events = sequence.tracks[track].events
                guard cursor < events.count else { continue }
                let eventSample = sample(forSeconds: sequence.tracks[track].eventSeconds[cursor])
                guard eventSample < limit else { continue }
                let order = MusicSequence.orderClass(events[cursor].message)
                if eventSample < bestSample || (eventSample == bestSample && order < bestClass) {
                    best = track
                    bestSample = eventSample
                    bestClass = order
                }
            }
            guard best >= 0 else { return }
            let message = sequence.tracks[best].events[cursors[best]].message
            cursors[best] += 1
            guard trackEnabled[best] else { continue }
            send(message, to: trackDestination[best], atFrameOffset: Int(max(0, bestSample - quantumStart)))
        }
    }

    private func send(_ message: MIDIMessage, to destination: Int, atFrameOffset offset: Int) {
        switch message {
        case .noteOn(let channel, let key, let velocity) where velocity > 0:
            let sounding = channel == 9 ? Int(key) : min(127, max(0, Int(key) + renderTranspose))
            let slot = (destination * 16 + Int(channel)) * 128 + Int(key)
            if activeKeys[slot] != 0 {
                // The same key again: end the previous one first (FIFO, as the file pairs them).
                destinations[destination].receive(
                    .noteOff(channel: channel, note: UInt8(activeKeys[slot] - 1), velocity: 0), atFrameOffset: offset)
            }
            activeKeys[slot] = Int16(sounding + 1)
            destinations[destination].receive(
                .noteOn(channel: channel, note: UInt8(sounding), velocity: velocity), atFrameOffset: offset)
        case .noteOn(let channel, let key, _), .noteOff(let channel, let key, _):
            let slot = (destination * 16 + Int(channel)) * 128 + Int(key)
            guard activeKeys[slot] != 0 else { return }
            let sounding = UInt8(activeKeys[slot] - 1)
            activeKeys[slot] = 0
            let velocity: UInt8
            if case .noteOff(_, _, let release) = message { velocity = release } else { velocity = 0 }
            destinations[destination].receive(
                .noteOff(channel: channel, note: sounding, velocity: velocity), atFrameOffset: offset)
        default:
            destinations[destination].receive(message, atFrameOffset: offset)
        }
    }

    /// Sends a message as FluidSynth's player does: as it is (a note-on for a sounding key
    /// retriggers it inside the synthesizer), keeping track of sounding keys for the release at
    /// the end.
    private func sendAsFluidSynth(_ message: MIDIMessage, to destination: Int, atFrameOffset offset: Int) {
        switch message {
        case .noteOn(let channel, let key, let velocity) where velocity > 0:
            let sounding = channel == 9 ? Int(key) : min(127, max(0, Int(key) + renderTranspose))
            activeKeys[(destination * 16 + Int(channel)) * 128 + Int(key)] = Int16(sounding + 1)
            destinations[destination].receive(
                .noteOn(channel: channel, note: UInt8(sounding), velocity: velocity), atFrameOffset: offset)
        case .noteOn(let channel, let key, let velocity), .noteOff(let channel, let key, let velocity):
            let slot = (destination * 16 + Int(channel)) * 128 + Int(key)
            let sounding = activeKeys[slot] != 0 ? UInt8(activeKeys[slot] - 1) : key
            activeKeys[slot] = 0
            destinations[destination].receive(
                .noteOff(channel: channel, note: sounding, velocity: velocity), atFrameOffset: offset)
        default:
            destinations[destination].receive(message, atFrameOffset: offset)
        }
    }

    /// Ends every note the player started, and lifts sustain and sostenuto pedals.
    private func releaseAllNotes(atFrameOffset offset: Int) {
        for destination in 0..<destinations.count {
            var usedChannels: UInt16 = 0
            for channel in 0..<16 {
                for key in 0..<128 {
                    let slot = (destination * 16 + channel) * 128 + key
                    let sounding = activeKeys[slot]
                    guard sounding != 0 else { continue }
                    activeKeys[slot] = 0
                    usedChannels |= 1 << channel
                    destinations[destination].receive(
                        .noteOff(channel: UInt8(channel), note: UInt8(sounding - 1), velocity: 0), atFrameOffset: offset
                    )
                }
            }
            for channel in 0..<16 where usedChannels & (1 << channel) != 0 {
                destinations[destination].receive(
                    .controlChange(channel: UInt8(channel), controller: 64, value: 0), atFrameOffset: offset)
                destinations[destination].receive(
                    .controlChange(channel: UInt8(channel), controller: 66, value: 0), atFrameOffset: offset)
            }
        }
    }

    private func positionCursors(atSeconds seconds: Double) {
        for index in 0..<sequence.tracks.count {
            let track = sequence.tracks[index]
            var low = 0
            var high = track.eventSeconds.count
            while low < high {
                let middle = (low + high) / 2
                if track.eventSeconds[middle] < seconds { low = middle + 1 } else { high = middle }
            }
            cursors[index] = low
        }
    }

    /// Applies transport commands sent since the last quantum (never waits for the lock).
    private func takeMail(at time: AudioTime) {
        guard
            let mail = mailbox.withLockIfAvailable({ box -> Mailbox in
                var taken = box
                if box.consumedSeek == nil, let held = heldSeek {
                    box.consumedSeek = held  // handed back to be freed off the render thread
                    heldSeek = nil
                }
                if box.consumedTrackEnabled == nil, let held = heldTrackEnabled {
                    box.consumedTrackEnabled = held
                    heldTrackEnabled = nil
                }
                taken.consumedSeek = nil
                taken.consumedTrackEnabled = nil
                box.seek = nil
                box.playing = nil
                box.rate = nil
                box.transpose = nil
                box.loop = nil
                box.trackEnabled = nil
                box.releaseNotes = false
                return taken
            })
        else { return }
        if mail.releaseNotes || mail.seek != nil || mail.playing == false {
            releaseAllNotes(atFrameOffset: 0)
        }
        if let enabled = mail.trackEnabled {
            for index in 0..<min(enabled.count, trackEnabled.count) { trackEnabled[index] = enabled[index] }
            heldTrackEnabled = enabled
        }
        if let transpose = mail.transpose { renderTranspose = transpose }
        if let loop = mail.loop {
            self.loop = loop.endSeconds > loop.startSeconds ? loop : nil
            loopsRemaining = loop.count
        }
        if let rate = mail.rate {
            // Re-anchor so that the position is continuous across the change.
            let now = secondsAt(sample: time.sampleTime)
            anchorSample = time.sampleTime
            anchorSeconds = now
            renderRate = rate
        }
        if let seek = mail.seek {
            for index in 0..<min(seek.cursors.count, cursors.count) { cursors[index] = seek.cursors[index] }
            for index in 0..<seek.chase.count {
                let (destination, message) = seek.chase[index]
                destinations[destination].receive(message, atFrameOffset: 0)
            }
            anchorSample = time.sampleTime
            anchorSeconds = seek.seconds
            needsAnchor = false
            heldSeek = seek
        }
        if let playing = mail.playing {
            if playing && !renderPlaying {
                anchorSample = time.sampleTime
                needsAnchor = false
            }
            renderPlaying = playing
        }
    }
}
