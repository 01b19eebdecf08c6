import Dispatch
import MIDICore
import Testing

@Suite("MIDIEventQueue")
struct MIDIEventQueueTests {
    func drain(_ queue: MIDIEventQueue) -> [(UInt64, MIDIMessage)] {
        var out: [(UInt64, MIDIMessage)] = []
        while let event = queue.withFirst({ event -> (UInt64, MIDIMessage) in
            let message = event.isSystemExclusive ? .systemExclusive(Array(event.bytes)) : event.message!
            return (event.arrival, message)
        }) {
            out.append(event)
            queue.removeFirst()
        }
        return out
    }

    @Test("messages come out in order with their arrival times; SysEx payloads intact")
    func roundTrip() {
        let queue = MIDIEventQueue(capacity: 8)
        let messages: [MIDIMessage] = [
            .noteOn(channel: 3, note: 60, velocity: 99), .programChange(channel: 9, program: 5),
            .pitchBend(channel: 1, value: 12_345), .systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .timingClock,
            .songPositionPointer(777), .channelPressure(channel: 2, pressure: 64),
        ]
        for (index, message) in messages.enumerated() { #expect(queue.push(message, arrival: UInt64(index) * 10)) }
        #expect(queue.firstArrival == 0)
        let out = drain(queue)
        #expect(out.map(\.1) == messages)
        #expect(out.map(\.0) == (0..<messages.count).map { UInt64($0) * 10 })
        #expect(queue.firstArrival == nil)
    }

    @Test("a full queue and an overlong SysEx drop the message and count it")
    func drops() {
        let queue = MIDIEventQueue(capacity: 4)
        for note in 0..<4 { #expect(queue.push(.noteOn(channel: 0, note: UInt8(note), velocity: 1), arrival: 0)) }
        #expect(!queue.push(.noteOn(channel: 0, note: 9, velocity: 1), arrival: 0))
        #expect(queue.droppedCount == 1)
        queue.removeAll()
        let long = [UInt8](repeating: 0x11, count: MIDIEventQueue.maximumMessageLength + 1)
        #expect(!queue.push(.systemExclusive(long), arrival: 0))
        #expect(queue.push(.systemExclusive(Array(long.dropLast())), arrival: 0))
        #expect(queue.droppedCount == 2)
        #expect(drain(queue).count == 1)
    }

    @Test("one producer thread and one consumer thread: nothing lost, nothing reordered")
    func concurrent() async {
        let queue = MIDIEventQueue(capacity: 64)
        let total = 200_000
        let producer = Task.detached {
            var sent = 0
            while sent < total {
                let message: MIDIMessage =
                    sent % 1_000 == 0
                    ? .systemExclusive([UInt8(sent / 1_000 % 128), 1, 2, 3])
                    : .controlChange(channel: UInt8(sent % 16), controller: 7, value: UInt8(sent % 128))
                if queue.push(message, arrival: UInt64(sent)) { sent += 1 }
            }
        }
        var received = 0
        var inOrder = true
        var intact = true
        while received < total {
            if let (arrival, message) = queue.withFirst({ event in
                (event.arrival, event.isSystemExclusive ? .systemExclusive(Array(event.bytes)) : event.message!)
            }) {
                queue.removeFirst()
                inOrder = inOrder && arrival == UInt64(received)
                let expected: MIDIMessage =
                    received % 1_000 == 0
                    ? .systemExclusive([UInt8(received / 1_000 % 128), 1, 2, 3])
                    : .controlChange(channel: UInt8(received % 16), controller: 7, value: UInt8(received % 128))
                intact = intact && message == expected
                received += 1
            }
        }
        await producer.value
        #expect(inOrder)
        #expect(intact)
        #expect(queue.droppedCount > 0 || queue.firstArrival == nil)
    }

    @Test("MIDIMessage(status:data1:data2:) and encodedDataBytes agree with the byte encoding")
    func messageFromBytes() throws {
        let messages: [MIDIMessage] = [
            .noteOff(channel: 1, note: 2, velocity: 3), .polyphonicKeyPressure(channel: 4, note: 5, pressure: 6),
            .controlChange(channel: 7, controller: 8, value: 9), .programChange(channel: 10, program: 11),
            .channelPressure(channel: 12, pressure: 13), .pitchBend(channel: 14, value: 8_192),
            .timeCodeQuarterFrame(0x35), .songPositionPointer(1_000), .songSelect(3), .tuneRequest, .start,
            .continue, .stop, .activeSensing, .systemReset, .timingClock,
        ]
        for message in messages {
            let bytes = try message.bytes
            var first: UInt8 = 0
            var second: UInt8 = 0
            let count = try #require(message.encodedDataBytes(into: &first, &second))
            #expect(count == bytes.count - 1)
            #expect(Array([first, second].prefix(count)) == Array(bytes.dropFirst()))
            #expect(MIDIMessage(status: bytes[0], data1: first, data2: second) == message)
        }
        #expect(MIDIMessage(status: 0xF0) == nil)
        #expect(MIDIMessage(status: 0xF4) == nil)
    }
}
