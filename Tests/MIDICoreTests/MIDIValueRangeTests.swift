import Testing

@testable import MIDICore

/// Issue 43, point 11: a number MIDI 1.0 cannot carry is reported where it is found, never masked.
@Suite("MIDI numbers out of range")
struct MIDIValueRangeTests {
    /// The message: every field out of range.
    let outOfRange = MIDIMessage.noteOn(channel: 20, note: 250, velocity: 200)

    @Test("validated() names the first field out of range, its value and its range")
    func validatedNamesTheField() {
        #expect(throws: MIDIValueError(field: "channel", value: 20, range: 0...15)) { try outOfRange.validated() }
        #expect(throws: MIDIValueError(field: "note", value: 250, range: 0...127)) {
            try MIDIMessage.noteOn(channel: 0, note: 250, velocity: 200).validated()
        }
        #expect(throws: MIDIValueError(field: "velocity", value: 128, range: 0...127)) {
            try MIDIMessage.noteOff(channel: 15, note: 127, velocity: 128).validated()
        }
        #expect(throws: MIDIValueError(field: "controller", value: 200, range: 0...127)) {
            try MIDIMessage.controlChange(channel: 1, controller: 200, value: 0).validated()
        }
        #expect(throws: MIDIValueError(field: "value", value: 16_384, range: 0...16_383)) {
            try MIDIMessage.pitchBend(channel: 1, value: 16_384).validated()
        }
        #expect(throws: MIDIValueError(field: "SysEx byte", value: 0xF7, range: 0...127)) {
            try MIDIMessage.systemExclusive([0x7E, 0xF7, 0x01]).validated()
        }
        #expect(throws: MIDIValueError(field: "song position", value: 0xFFFF, range: 0...16_383)) {
            try MIDIMessage.songPositionPointer(0xFFFF).validated()
        }
        #expect(
            MIDIValueError(field: "note", value: 250, range: 0...127).description == "note 250 is out of range (0-127)")
    }

    @Test("every message in range validates to itself")
    func inRangeValidates() throws {
        for message in everyMessageKind { #expect(try message.validated() == message) }
    }

    @Test("encoding refuses the message instead of masking it into 94 7A 48")
    func encodingRefuses() {
        #expect(throws: MIDIValueError(field: "channel", value: 20, range: 0...15)) { try outOfRange.bytes }
        var bytes: [UInt8] = [1]
        #expect(throws: MIDIValueError.self) { try outOfRange.encode(into: &bytes) }
        var encoder = MIDIStreamEncoder(usesRunningStatus: true)
        #expect(throws: MIDIValueError.self) { try encoder.encode(outOfRange, into: &bytes) }
        #expect(bytes == [1], "nothing appended")
        var first: UInt8 = 0
        var second: UInt8 = 0
        #expect(outOfRange.encodedDataBytes(into: &first, &second) == nil)
    }

    @Test("a queue refuses the message and counts it")
    func queueRefuses() {
        let queue = MIDIEventQueue(capacity: 4)
        #expect(!queue.push(outOfRange, arrival: 1))
        #expect(!queue.push(.systemExclusive([0x80]), arrival: 2))
        #expect(queue.droppedCount == 2)
        #expect(queue.firstArrival == nil)
        #expect(queue.push(.noteOn(channel: 15, note: 127, velocity: 127), arrival: 3))
    }

    @Test("the byte initializers give no message for a data byte of 0x80 or more")
    func byteInitializersRefuse() {
        #expect(MIDIMessage(status: 0x90, data1: 250, data2: 100) == nil)
        #expect(MIDIMessage(status: 0x90, data1: 60, data2: 200) == nil)
        #expect(MIDIMessage(channelStatus: 0xB0, 0x80, 0) == nil)
        #expect(MIDIMessage(status: 0xF3, data1: 0x80) == nil)
        #expect(MIDIMessage(status: 0x90, data1: 60, data2: 127) == .noteOn(channel: 0, note: 60, velocity: 127))
    }
}
