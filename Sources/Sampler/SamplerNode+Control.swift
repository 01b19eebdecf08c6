import CFluidSynth
import MIDICore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How control threads reach a synthesizer that only its render thread calls.
///
/// The render thread must never wait for a control thread inside FluidSynth (whose own API lock,
/// `synth.threadsafe-api`, can then be off): the synthesizer has one caller at a time.
///
/// - Commands (the note API, controllers, resets, gain, polyphony, interpolation, the effect
///   switches) go through a lock-free queue, the `MIDIEventQueue` live input uses, which the
///   render thread drains at the start of its next quantum, in the order they were sent.
/// - What must happen at once (loading fonts and samples, selecting a program with an error for a
///   missing one, reading the synthesizer's state) holds the synthesizer: the control thread lets
///   a quantum in progress end, and a render that starts meanwhile waits at most `patience` for
///   it, then renders silence for that quantum (its events play at the start of the next). A
///   sampler that is not rendering is held at no cost.
///
/// The render thread takes no lock and makes no system call here: it reads and writes two
/// atomic flags, and, only while a control thread holds the synthesizer, reads the clock.
final class SynthesizerControl: @unchecked Sendable {
    /// Commands for the render thread. One producer at a time: control threads send under
    /// `sendLock`.
    let queue = MIDIEventQueue(capacity: 512)
    /// Control threads that send, one at a time; the render thread never takes it.
    private let sendLock = Mutex(())
    /// Control threads that hold the synthesizer, one at a time; the render thread never takes
    /// it. (Taken after `sendLock` when both are: a sender finding the queue full holds.)
    private let holdLock = Mutex(())
    /// Set by the render thread while it uses the synthesizer.
    private let rendering = Atomic<Bool>(false)
    /// Set by a control thread while it uses the synthesizer.
    private let held = Atomic<Bool>(false)
    /// How long a render waits for a control thread holding the synthesizer, in nanoseconds:
    /// long enough for a short call (a program change, one preset's samples found in memory),
    /// short against any audio period.
    static let patience: UInt64 = 200_000

    /// Render thread: takes the synthesizer for one quantum. False when a control thread holds
    /// it for longer than `patience`: the quantum must then leave the synthesizer alone.
    func enterRender() -> Bool {
        rendering.store(true, ordering: .sequentiallyConsistent)
        if !held.load(ordering: .sequentiallyConsistent) { return true }
        rendering.store(false, ordering: .sequentiallyConsistent)
        let deadline = MIDITimestamp.now() &+ Self.patience
        repeat {
            if !held.load(ordering: .relaxed) {
                rendering.store(true, ordering: .sequentiallyConsistent)
                if !held.load(ordering: .sequentiallyConsistent) { return true }
                rendering.store(false, ordering: .sequentiallyConsistent)
            }
        } while MIDITimestamp.now() < deadline
        return false
    }

    /// Render thread: gives the synthesizer back after `enterRender()` returned true.
    func leaveRender() { rendering.store(false, ordering: .releasing) }

    /// Control thread: runs `body` (which pushes to `queue`) while no other control thread sends.
    /// A thread holding the synthesizer meanwhile does not delay it.
    func sending<Result>(_ body: () -> Result) -> Result { Self.locked(sendLock, body) }

    /// Control thread: runs `body` holding the synthesizer (no quantum renders meanwhile, and no
    /// other control thread holds it).
    func holding<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try Self.locked(holdLock) { () throws(Failure) -> Result in
            // A quantum in progress ends first: the next is then as far away as it can be.
            while rendering.load(ordering: .acquiring) { sched_yield() }
            held.store(true, ordering: .sequentiallyConsistent)
            while rendering.load(ordering: .sequentiallyConsistent) { sched_yield() }
            defer { held.store(false, ordering: .releasing) }
            return try body()
        }
    }

    private static func locked<Result, Failure: Error>(
        _ lock: borrowing Mutex<Void>, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // (The result goes around the lock's closure, which would have it sent across regions.)
        var result: Swift.Result<Result, Failure>?
        lock.withLock { _ in result = Swift.Result { () throws(Failure) -> Result in try body() } }
        return try result!.get()
    }
}

/// What a control thread asks of a sampler's synthesizer, as it travels through the command
/// queue: the kind in the event's source tag, its argument in the arrival stamp (commands are not
/// timed: each applies at the start of the next quantum), a SysEx payload in its bytes.
enum SamplerCommand: UInt16 {
    /// A channel message or System Reset, its fields as given (`packed(_:)`).
    case message
    /// A SysEx message: the payload.
    case systemExclusive
    /// The gain: the bit pattern of a `Float`.
    case gain
    /// The polyphony.
    case polyphony
    /// The interpolation on every channel: FluidSynth's constant.
    case interpolation
    /// FluidSynth's reverb on (1) or off (0).
    case reverb
    /// FluidSynth's chorus on (1) or off (0).
    case chorus
    /// All notes off on every channel.
    case allNotesOff
    /// All sound off on every channel.
    case allSoundOff

    /// A message's kind and fields in one word, unchanged (not masked to MIDI's ranges: the
    /// synthesizer judges them, as when they were applied at once); nil for the messages a
    /// sampler ignores (and SysEx, which travels as its payload).
    static func packed(_ message: MIDIMessage) -> UInt64? {
        func pack(_ kind: UInt8, _ channel: UInt8, _ first: UInt8, _ second: UInt16 = 0) -> UInt64 {
            UInt64(kind) | UInt64(channel) << 8 | UInt64(first) << 16 | UInt64(second) << 24
        }
        switch message {
        case .noteOff(let channel, let note, let velocity): return pack(0x80, channel, note, UInt16(velocity))
        case .noteOn(let channel, let note, let velocity): return pack(0x90, channel, note, UInt16(velocity))
        case .polyphonicKeyPressure(let channel, let note, let pressure):
            return pack(0xA0, channel, note, UInt16(pressure))
        case .controlChange(let channel, let controller, let value):
            return pack(0xB0, channel, controller, UInt16(value))
        case .programChange(let channel, let program): return pack(0xC0, channel, program)
        case .channelPressure(let channel, let pressure): return pack(0xD0, channel, pressure)
        case .pitchBend(let channel, let value): return pack(0xE0, channel, 0, value)
        case .systemReset: return pack(0xFF, 0, 0)
        default: return nil
        }
    }

    /// The message `packed(_:)` made.
    static func message(packed word: UInt64) -> MIDIMessage? {
        let channel = UInt8(truncatingIfNeeded: word >> 8)
        let first = UInt8(truncatingIfNeeded: word >> 16)
        let second = UInt16(truncatingIfNeeded: word >> 24)
        switch UInt8(truncatingIfNeeded: word) {
        case 0x80: return .noteOff(channel: channel, note: first, velocity: UInt8(truncatingIfNeeded: second))
        case 0x90: return .noteOn(channel: channel, note: first, velocity: UInt8(truncatingIfNeeded: second))
        case 0xA0:
            return .polyphonicKeyPressure(channel: channel, note: first, pressure: UInt8(truncatingIfNeeded: second))
        case 0xB0:
            return .controlChange(channel: channel, controller: first, value: UInt8(truncatingIfNeeded: second))
        case 0xC0: return .programChange(channel: channel, program: first)
        case 0xD0: return .channelPressure(channel: channel, pressure: first)
        case 0xE0: return .pitchBend(channel: channel, value: second)
        case 0xFF: return .systemReset
        default: return nil
        }
    }
}

extension SamplerNode {
    /// Control thread: queues `command` for the start of the render thread's next quantum.
    func send(_ command: SamplerCommand, _ argument: UInt64 = 0) {
        control.sending { enqueue(command, argument) }
    }

    /// Control thread: queues `message` for the start of the render thread's next quantum.
    func send(_ message: MIDIMessage) {
        if case .systemExclusive(let payload) = message {
            control.sending {
                payload.withUnsafeBufferPointer { enqueue(.systemExclusive, payload: $0) }
            }
        } else if let packed = SamplerCommand.packed(message) {
            send(.message, packed)
        }
    }

    /// Control thread, inside `control.sending`: queues a command. When the queue is full (or
    /// a SysEx payload is longer than a slot), it is applied at once instead, holding the
    /// synthesizer, after the commands queued before it: nothing is lost, and order is kept.
    func enqueue(
        _ command: SamplerCommand, _ argument: UInt64 = 0,
        payload: UnsafeBufferPointer<UInt8> = UnsafeBufferPointer(start: nil, count: 0)
    ) {
        guard !control.queue.pushSystemExclusive(payload, arrival: argument, source: command.rawValue) else { return }
        control.holding {
            applyCommands()
            apply(command, argument, payload: payload)
        }
    }

    /// Runs `body`, which calls the synthesizer, at once: after the commands queued so far are
    /// applied, holding the synthesizer (see `SynthesizerControl`). Not reentrant: `body` must not
    /// send commands or hold the synthesizer again.
    func exclusively<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try control.holding { () throws(Failure) -> Result in
            applyCommands()
            return try body()
        }
    }

    /// The synthesizer's owner (the render thread, or a control thread holding it): applies every
    /// queued command, oldest first.
    func applyCommands() {
        let queue = control.queue
        while queue.withFirst({ event in
            apply(SamplerCommand(rawValue: event.source) ?? .message, event.arrival, payload: event.bytes)
        }) != nil {
            queue.removeFirst()
        }
    }

    /// The synthesizer's owner: applies one command.
    private func apply(_ command: SamplerCommand, _ argument: UInt64, payload: UnsafeBufferPointer<UInt8>) {
        let handle = synth.synth
        switch command {
        case .message:
            if let message = SamplerCommand.message(packed: argument) { apply(message) }
        case .systemExclusive:
            applySystemExclusive(payload)
        case .gain:
            baseGain = Float(bitPattern: UInt32(truncatingIfNeeded: argument))
            fluid_synth_set_gain(handle, baseGain)
        case .polyphony:
            fluid_synth_set_polyphony(handle, Int32(truncatingIfNeeded: argument))
        case .interpolation:
            // (A range of `Int`: iterating one of `Int32` allocates in debug builds.)
            for channel in 0..<16 {
                fluid_synth_set_interp_method(handle, Int32(channel), Int32(truncatingIfNeeded: argument))
            }
        case .reverb:
            fluid_synth_reverb_on(handle, -1, Int32(truncatingIfNeeded: argument))
        case .chorus:
            fluid_synth_chorus_on(handle, -1, Int32(truncatingIfNeeded: argument))
        case .allNotesOff:
            for channel in 0..<16 { fluid_synth_all_notes_off(handle, Int32(channel)) }
        case .allSoundOff:
            for channel in 0..<16 { fluid_synth_all_sounds_off(handle, Int32(channel)) }
        }
    }
}
