import Synchronization

/// A bounded, lock-free queue that carries timestamped MIDI messages from one input thread (an
/// ALSA sequencer reader, a network event loop) to the audio thread.
///
/// One producer and one consumer: each live source owns its queue. Messages are copied into
/// preallocated slots (SysEx included, up to `maximumMessageLength` bytes), so neither side
/// allocates, locks or waits; a full queue, an overlong SysEx or a number out of MIDI's range drops
/// the message, counts it and makes `push` return false.
public final class MIDIEventQueue: @unchecked Sendable {
    /// The longest message a slot holds, in bytes (SysEx payload without F0 and F7; enough for a
    /// MIDI Tuning Standard bulk dump).
    public static let maximumMessageLength = 512

    /// One message as the consumer sees it. `bytes` points into the queue and is valid only inside
    /// the `withFirst` call that provides it.
    public struct Event {
        /// Arrival time (`MIDITimestamp`, nanoseconds).
        public var arrival: UInt64
        /// The producer's tag for where the message came from.
        public var source: UInt16
        /// Whether `bytes` is a SysEx payload (without F0 and F7) rather than a status byte and its
        /// data bytes.
        public var isSystemExclusive: Bool
        /// The message's bytes: its status byte and data bytes (one to three in all), or the SysEx payload.
        /// They point into the queue's slot: copy what you need before `withFirst` returns.
        public var bytes: UnsafeBufferPointer<UInt8>

        /// The message, when it is not SysEx (building a SysEx message would allocate its array).
        public var message: MIDIMessage? {
            // Plain indexing: `Collection.first` and friends allocate when not specialized (debug
            // builds), and this runs on the audio thread.
            guard !isSystemExclusive, bytes.count > 0, let base = bytes.baseAddress else { return nil }
            let data1 = bytes.count > 1 ? base[1] : 0
            let data2 = bytes.count > 2 ? base[2] : 0
            return MIDIMessage(status: base[0], data1: data1, data2: data2)
        }
    }

    private let capacity: Int
    private let stride: Int
    private let storage: UnsafeMutableRawPointer
    /// Next slot to write (producer) and next slot to read (consumer); both only grow.
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    // Slot layout: arrival (8 bytes), length (4), source (2), flags (2), bytes.
    private static let headerSize = 16

    /// Creates a queue of `capacity` slots (rounded up to a power of two).
    public init(capacity: Int = 512) {
        var size = 1
        while size < max(2, capacity) { size <<= 1 }
        self.capacity = size
        stride = Self.headerSize + Self.maximumMessageLength
        storage = .allocate(byteCount: size * stride, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: size * stride)
    }

    deinit { storage.deallocate() }

    /// Messages dropped because the queue was full, the message too long or a number in it out of
    /// MIDI's range.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Producer side: appends a message; false (and counted in ``droppedCount``) when it does not
    /// fit, or when a number in it is out of MIDI's range (``MIDIMessage/validated()`` says which).
    @discardableResult
    public func push(_ message: MIDIMessage, arrival: UInt64, source: UInt16 = 0) -> Bool {
        guard message.firstValueOutOfRange == nil else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        switch message {
        case .systemExclusive(let payload):
            return payload.withUnsafeBufferPointer {
                push(bytes: $0, systemExclusive: true, arrival: arrival, source: source)
            }
        default:
            var bytes: (UInt8, UInt8, UInt8) = (message.statusByte, 0, 0)
            guard let dataCount = message.encodedDataBytes(into: &bytes.1, &bytes.2) else { return false }
            let count = dataCount + 1
            return withUnsafeBytes(of: &bytes) { raw in
                push(
                    bytes: UnsafeBufferPointer(
                        start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count),
                    systemExclusive: false, arrival: arrival, source: source)
            }
        }
    }

    /// Producer side: appends a SysEx message given as its payload (without F0 and F7), copied
    /// from memory the caller owns, without building an array; false (and counted) when it does not fit.
    @discardableResult
    public func pushSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, arrival: UInt64, source: UInt16 = 0) -> Bool
    {
        push(bytes: payload, systemExclusive: true, arrival: arrival, source: source)
    }

    private func push(bytes: UnsafeBufferPointer<UInt8>, systemExclusive: Bool, arrival: UInt64, source: UInt16) -> Bool
    {
        let write = head.load(ordering: .relaxed)
        guard bytes.count <= Self.maximumMessageLength, write - tail.load(ordering: .acquiring) < capacity else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        let slot = storage + (write & (capacity - 1)) * stride
        slot.storeBytes(of: arrival, as: UInt64.self)
        slot.storeBytes(of: UInt32(bytes.count), toByteOffset: 8, as: UInt32.self)
        slot.storeBytes(of: source, toByteOffset: 12, as: UInt16.self)
        slot.storeBytes(of: systemExclusive ? 1 : 0, toByteOffset: 14, as: UInt16.self)
        if let base = bytes.baseAddress, !bytes.isEmpty {
            (slot + Self.headerSize).copyMemory(from: base, byteCount: bytes.count)
        }
        head.store(write + 1, ordering: .releasing)
        return true
    }

    /// Consumer side: the arrival time of the oldest message, if any.
    public var firstArrival: UInt64? {
        let read = tail.load(ordering: .relaxed)
        guard read < head.load(ordering: .acquiring) else { return nil }
        return (storage + (read & (capacity - 1)) * stride).load(as: UInt64.self)
    }

    /// Consumer side: calls `body` with the oldest message (without removing it); nil if empty.
    public func withFirst<Result>(_ body: (Event) -> Result) -> Result? {
        let read = tail.load(ordering: .relaxed)
        guard read < head.load(ordering: .acquiring) else { return nil }
        let slot = storage + (read & (capacity - 1)) * stride
        let count = Int(slot.load(fromByteOffset: 8, as: UInt32.self))
        let event = Event(
            arrival: slot.load(as: UInt64.self),
            source: slot.load(fromByteOffset: 12, as: UInt16.self),
            isSystemExclusive: slot.load(fromByteOffset: 14, as: UInt16.self) != 0,
            bytes: UnsafeBufferPointer(
                start: (slot + Self.headerSize).assumingMemoryBound(to: UInt8.self), count: count))
        return body(event)
    }

    /// Consumer side: removes the oldest message (no-op if empty).
    public func removeFirst() {
        let read = tail.load(ordering: .relaxed)
        guard read < head.load(ordering: .acquiring) else { return }
        tail.store(read + 1, ordering: .releasing)
    }

    /// Consumer side: removes every message.
    public func removeAll() {
        tail.store(head.load(ordering: .acquiring), ordering: .releasing)
    }
}
