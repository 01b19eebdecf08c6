// The RTP-MIDI recovery journal's cost per packet: the sender's encoding (the history's journal
// for the next packet, as bytes), the receiver's decoding, and the repair a gap asks for, over a
// dense 16-channel stream. Run in release mode:
//
//   swift build -c release --product journal-benchmark && .build/release/journal-benchmark [PACKETS]
//
// Prints one JSON object: nanoseconds per packet for encoding and decoding, per gap for the
// repair (every tenth packet is lost; the next one's journal repairs it), and the journal's mean
// and largest size in bytes. The stream: every packet 1-4 messages (notes on and off over 16
// channels, a controller, a wheel or a program now and then); receiver feedback every 100
// packets (as an Apple peer sends about once a second at 100 packets a second).
import MIDICore
import MIDIIO

#if canImport(Glibc)
    import Glibc
#endif

func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000
/// A fixed linear congruential stream, so that every run plays the same packets.
struct Stream {
    var state: UInt64 = 0x5EED
    mutating func random(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}
var stream = Stream()

// The stream, made first (not timed).
var packets: [[MIDIMessage]] = []
for _ in 0..<count {
    var messages: [MIDIMessage] = []
    for _ in 0..<(1 + stream.random(4)) {
        let channel = UInt8(stream.random(16))
        switch stream.random(20) {
        case 0...8:
            messages.append(
                .noteOn(channel: channel, note: UInt8(36 + stream.random(48)), velocity: UInt8(1 + stream.random(127))))
        case 9...15: messages.append(.noteOff(channel: channel, note: UInt8(36 + stream.random(48)), velocity: 0))
        case 16:
            messages.append(
                .controlChange(
                    channel: channel, controller: [1, 7, 10, 11, 64][stream.random(5)], value: UInt8(stream.random(128))
                ))
        case 17: messages.append(.pitchBend(channel: channel, value: UInt16(stream.random(16_384))))
        case 18: messages.append(.programChange(channel: channel, program: UInt8(stream.random(128))))
        default: messages.append(.channelPressure(channel: channel, pressure: UInt8(stream.random(128))))
        }
    }
    packets.append(messages)
}

var history = JournalHistory(firstSequence: 0)
var journals: [[UInt8]] = []
journals.reserveCapacity(count)
var encode: UInt64 = 0
for (index, messages) in packets.enumerated() {
    let sequence = UInt16(truncatingIfNeeded: index)
    let start = now()
    journals.append(history.journal(forPacket: sequence).serialized())
    for message in messages { history.record(message, inPacket: sequence) }
    encode += now() - start
    if index % 100 == 99 { history.acknowledge(through: sequence) }
}

var decode: UInt64 = 0
var repair: UInt64 = 0
var receiver = MIDIChannelStates()
var repairs = 0
for (index, bytes) in journals.enumerated() {
    let start = now()
    guard let journal = try? RecoveryJournal(parsing: bytes[...]) else { fatalError("a journal did not parse") }
    let parsed = now()
    // Every tenth packet is lost (its messages never applied); the one after it repairs the gap.
    if index % 10 == 6 {
        for message in receiver.repairs(from: journal) {
            receiver.apply(message)
            repairs += 1
        }
    }
    let repaired = now()
    decode += parsed - start
    repair += repaired - parsed
    if index % 10 != 5 {
        for message in packets[index] { receiver.apply(message) }
    }
}

let sizes = journals.map(\.count)
let mean = Double(sizes.reduce(0, +)) / Double(count)
print(
    """
    {"packets": \(count), "encode_ns_per_packet": \(Double(encode) / Double(count)), \
    "decode_ns_per_packet": \(Double(decode) / Double(count)), \
    "repair_ns_per_gap": \(Double(repair) / Double(count / 10)), \
    "journal_bytes_mean": \(mean), "journal_bytes_max": \(sizes.max() ?? 0), "repair_messages": \(repairs)}
    """)
