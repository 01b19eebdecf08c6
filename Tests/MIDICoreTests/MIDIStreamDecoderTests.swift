import TestSupport
import Testing

@testable import MIDICore

/// One of every message kind, with edge values.
let everyMessageKind: [MIDIMessage] = [
    .noteOff(channel: 0, note: 60, velocity: 64), .noteOn(channel: 15, note: 127, velocity: 1),
    .noteOn(channel: 3, note: 0, velocity: 0), .polyphonicKeyPressure(channel: 2, note: 61, pressure: 100),
    .controlChange(channel: 9, controller: 64, value: 127), .controlChange(channel: 1, controller: 123, value: 0),
    .programChange(channel: 4, program: 127), .channelPressure(channel: 5, pressure: 33),
    .pitchBend(channel: 6, value: 0), .pitchBend(channel: 6, value: 8192), .pitchBend(channel: 7, value: 16383),
    .systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .systemExclusive([]), .timeCodeQuarterFrame(0x35),
    .songPositionPointer(0), .songPositionPointer(16383), .songSelect(12), .tuneRequest, .timingClock, .start,
    .continue, .stop, .activeSensing, .systemReset,
]

@Suite("MIDI 1.0 stream decoding and encoding")
struct MIDIStreamDecoderTests {
    @Test("every message kind encodes to the MIDI 1.0 bytes and decodes back")
    func roundTripEveryKind() throws {
        for message in everyMessageKind {
            var decoder = MIDIStreamDecoder()
            let (messages, diagnostics) = decoder.decode(try message.bytes)
            #expect(messages == [message], "\(message)")
            #expect(diagnostics.isEmpty)
        }
    }

    @Test("known byte layouts")
    func byteLayouts() throws {
        #expect(try MIDIMessage.noteOn(channel: 9, note: 36, velocity: 100).bytes == [0x99, 36, 100])
        #expect(try MIDIMessage.pitchBend(channel: 0, value: 8192).bytes == [0xE0, 0x00, 0x40])
        #expect(try MIDIMessage.programChange(channel: 1, program: 5).bytes == [0xC1, 5])
        #expect(try MIDIMessage.systemExclusive([1, 2]).bytes == [0xF0, 1, 2, 0xF7])
        #expect(try MIDIMessage.songPositionPointer(0x3FFF).bytes == [0xF2, 0x7F, 0x7F])
        #expect(MIDIMessage.noteOn(channel: 0, note: 60, velocity: 0).isNoteEnd)
        #expect(MIDIMessage.noteOn(channel: 0, note: 60, velocity: 1).isNoteStart)
        #expect(MIDIMessage.controlChange(channel: 3, controller: 7, value: 100).channel == 3)
        #expect(MIDIMessage.start.channel == nil)
    }

    @Test("running status: data bytes reuse the last channel status")
    func runningStatus() {
        var decoder = MIDIStreamDecoder()
        let (messages, diagnostics) = decoder.decode([0x90, 60, 100, 62, 100, 60, 0, 0xC0, 5, 6])
        #expect(
            messages == [
                .noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 62, velocity: 100),
                .noteOn(channel: 0, note: 60, velocity: 0), .programChange(channel: 0, program: 5),
                .programChange(channel: 0, program: 6),
            ])
        #expect(diagnostics.isEmpty)
    }

    @Test("real-time bytes interleave anywhere without breaking a message or running status")
    func realTimeInterleaved() {
        var decoder = MIDIStreamDecoder()
        let (messages, _) = decoder.decode([0x90, 0xF8, 60, 0xFE, 100, 0xFA, 62, 0xF8, 90, 0xF0, 1, 0xF8, 2, 0xF7])
        #expect(
            messages == [
                .timingClock, .activeSensing, .noteOn(channel: 0, note: 60, velocity: 100), .start, .timingClock,
                .noteOn(channel: 0, note: 62, velocity: 90), .timingClock, .systemExclusive([1, 2]),
            ])
    }

    @Test("SysEx split across many decode calls is reassembled")
    func sysExAcrossChunks() {
        var decoder = MIDIStreamDecoder()
        var messages: [MIDIMessage] = []
        for chunk: [UInt8] in [[0xF0, 0x41], [0x10, 0x42], [], [0x12, 0x40, 0x00], [0x7F, 0x00, 0x41, 0xF7]] {
            decoder.decode(chunk, emit: { messages.append($0) })
        }
        #expect(messages == [.systemExclusive([0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41])])
    }

    @Test("undefined status bytes are skipped with a diagnostic; the stream goes on")
    func undefinedStatus() {
        for undefined: UInt8 in [0xF4, 0xF5, 0xF9, 0xFD] {
            var decoder = MIDIStreamDecoder()
            let (messages, diagnostics) = decoder.decode([undefined, 0x90, 60, 1])
            #expect(messages == [.noteOn(channel: 0, note: 60, velocity: 1)])
            #expect(diagnostics == [.undefinedStatus(undefined)])
        }
    }

    @Test("data bytes with no status, a stray F7 and a cut-off SysEx are diagnosed")
    func garbage() {
        var decoder = MIDIStreamDecoder()
        let (messages, diagnostics) = decoder.decode([60, 0xF7, 0xF0, 1, 2, 0x80, 60, 0, 0x90, 60])
        #expect(messages == [.noteOff(channel: 0, note: 60, velocity: 0)])
        #expect(diagnostics == [.dataWithoutStatus(60), .strayEndOfExclusive, .unterminatedSysEx(byteCount: 2)])
        decoder.reset()
        let (after, _) = decoder.decode([61])
        #expect(after.isEmpty)
    }

    @Test("a stray F7 drops the partial message and ends running status: 90 3C F7 40 is no note")
    func strayEndOfExclusiveInsideMessage() {
        var decoder = MIDIStreamDecoder()
        let (messages, diagnostics) = decoder.decode([0x90, 0x3C, 0xF7, 0x40])
        #expect(messages.isEmpty)
        #expect(diagnostics == [.incompleteMessage(status: 0x90), .strayEndOfExclusive, .dataWithoutStatus(0x40)])
    }

    @Test("a stray F7 between streams, split across calls, or among real-time bytes ends running status")
    func strayEndOfExclusiveEndsRunningStatus() {
        // After a complete note-on: the data bytes that follow have no status left to reuse.
        var decoder = MIDIStreamDecoder()
        var (messages, diagnostics) = decoder.decode([0x90, 0x3C, 0x40, 0xF7, 0x3E, 0x40])
        #expect(messages == [.noteOn(channel: 0, note: 0x3C, velocity: 0x40)])
        #expect(diagnostics == [.strayEndOfExclusive, .dataWithoutStatus(0x3E), .dataWithoutStatus(0x40)])

        // A one-byte message's running status ends too.
        decoder = MIDIStreamDecoder()
        (messages, diagnostics) = decoder.decode([0xC0, 5, 0xF7, 6])
        #expect(messages == [.programChange(channel: 0, program: 5)])
        #expect(diagnostics == [.strayEndOfExclusive, .dataWithoutStatus(6)])

        // A partial system common message is dropped.
        decoder = MIDIStreamDecoder()
        (messages, diagnostics) = decoder.decode([0xF2, 0x10, 0xF7, 0x20])
        #expect(messages.isEmpty)
        #expect(diagnostics == [.incompleteMessage(status: 0xF2), .strayEndOfExclusive, .dataWithoutStatus(0x20)])

        // The same stream in pieces: the decoder's state carries the F7 across calls.
        decoder = MIDIStreamDecoder()
        var pieces: [MIDIMessage] = []
        for chunk: [UInt8] in [[0x90, 0x3C], [0xF7], [0x40, 0x41]] {
            decoder.decode(chunk, emit: { pieces.append($0) })
        }
        #expect(pieces.isEmpty)

        // Real-time bytes still pass, and a new status byte starts over.
        decoder = MIDIStreamDecoder()
        (messages, diagnostics) = decoder.decode([0x90, 0x3C, 0xF8, 0xF7, 0xFE, 0x40, 0x90, 0x3E, 0x40, 0x3F, 0x41])
        #expect(
            messages == [
                .timingClock, .activeSensing, .noteOn(channel: 0, note: 0x3E, velocity: 0x40),
                .noteOn(channel: 0, note: 0x3F, velocity: 0x41),
            ])
        #expect(diagnostics == [.incompleteMessage(status: 0x90), .strayEndOfExclusive, .dataWithoutStatus(0x40)])

        // An F7 that ends a SysEx is no stray: the SysEx comes out, and no running status is left.
        decoder = MIDIStreamDecoder()
        (messages, diagnostics) = decoder.decode([0x90, 0x3C, 0x40, 0xF0, 1, 0xF7, 0x3E])
        #expect(messages == [.noteOn(channel: 0, note: 0x3C, velocity: 0x40), .systemExclusive([1])])
        #expect(diagnostics == [.dataWithoutStatus(0x3E)])
    }

    @Test("system common messages end running status")
    func systemCommonEndsRunningStatus() {
        var decoder = MIDIStreamDecoder()
        let (messages, diagnostics) = decoder.decode([0x90, 60, 1, 0xF3, 4, 61, 1])
        #expect(messages == [.noteOn(channel: 0, note: 60, velocity: 1), .songSelect(4)])
        #expect(diagnostics == [.dataWithoutStatus(61), .dataWithoutStatus(1)])
    }

    @Test("the encoder's running status drops repeated status bytes and decodes the same")
    func encoderRunningStatus() throws {
        let messages: [MIDIMessage] = [
            .noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 64, velocity: 100),
            .timingClock, .noteOn(channel: 0, note: 67, velocity: 100), .noteOn(channel: 1, note: 60, velocity: 1),
            .systemExclusive([1]), .noteOn(channel: 1, note: 61, velocity: 1),
        ]
        var plain = MIDIStreamEncoder(usesRunningStatus: false)
        var running = MIDIStreamEncoder(usesRunningStatus: true)
        var plainBytes: [UInt8] = []
        var runningBytes: [UInt8] = []
        for message in messages {
            try plain.encode(message, into: &plainBytes)
            try running.encode(message, into: &runningBytes)
        }
        #expect(runningBytes.count == plainBytes.count - 2)
        var decoder = MIDIStreamDecoder()
        #expect(decoder.decode(runningBytes).messages == messages)
    }

    @Test("random message streams survive encode → decode, with and without running status")
    func randomStreams() throws {
        var generator = SplitMix(seed: 42)
        for _ in 0..<200 {
            let messages = (0..<Int.random(in: 1...50, using: &generator)).map { _ in randomMessage(&generator) }
            for runningStatus in [false, true] {
                var encoder = MIDIStreamEncoder(usesRunningStatus: runningStatus)
                var bytes: [UInt8] = []
                for message in messages { try encoder.encode(message, into: &bytes) }
                var decoder = MIDIStreamDecoder()
                let (decoded, diagnostics) = decoder.decode(bytes)
                #expect(decoded == messages)
                #expect(diagnostics.isEmpty)
            }
        }
    }
}

func randomMessage(_ g: inout SplitMix) -> MIDIMessage {
    let channel = UInt8.random(in: 0...15, using: &g)
    let a = UInt8.random(in: 0...127, using: &g)
    let b = UInt8.random(in: 0...127, using: &g)
    switch Int.random(in: 0..<10, using: &g) {
    case 0: return .noteOff(channel: channel, note: a, velocity: b)
    case 1: return .noteOn(channel: channel, note: a, velocity: b)
    case 2: return .polyphonicKeyPressure(channel: channel, note: a, pressure: b)
    case 3: return .controlChange(channel: channel, controller: a, value: b)
    case 4: return .programChange(channel: channel, program: a)
    case 5: return .channelPressure(channel: channel, pressure: a)
    case 6: return .pitchBend(channel: channel, value: UInt16.random(in: 0...16383, using: &g))
    case 7:
        return .systemExclusive(
            (0..<Int.random(in: 0...20, using: &g)).map { _ in UInt8.random(in: 0...127, using: &g) })
    case 8: return [.timingClock, .start, .continue, .stop, .activeSensing, .tuneRequest][Int(a) % 6]
    default: return .songPositionPointer(UInt16.random(in: 0...16383, using: &g))
    }
}
