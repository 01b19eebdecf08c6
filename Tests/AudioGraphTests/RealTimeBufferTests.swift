import AudioGraph
import Testing

/// Counts its instances, to see a buffer deinitialize its elements.
private final class Tracked {
    nonisolated(unsafe) static var alive = 0
    init() { Tracked.alive += 1 }
    deinit { Tracked.alive -= 1 }
}

@Suite("RealTimeBuffer")
struct RealTimeBufferTests {
    @Test("a new buffer has its capacity, every element zero")
    func zeroedAtCapacity() {
        let buffer = RealTimeBuffer<Double>(capacity: 1_000)
        #expect(buffer.capacity == 1_000)
        #expect(buffer.buffer.count == 1_000)
        #expect(buffer.buffer.allSatisfy { $0 == 0 })
    }

    @Test("elements written through the subscript and through base are the same memory")
    func subscriptAndBase() {
        let buffer = RealTimeBuffer<Int>(capacity: 8)
        for index in 0..<8 { buffer[index] = index * index }
        #expect(buffer.base[5] == 25)
        buffer.base[7] = -1
        #expect(buffer[7] == -1)
    }

    @Test("update(repeating:) fills every element, clear() sets them back to zero")
    func fillAndClear() {
        let buffer = RealTimeBuffer<Float>(capacity: 100, repeating: 3)
        #expect(buffer.buffer.allSatisfy { $0 == 3 })
        buffer.update(repeating: -2)
        #expect(buffer.buffer.allSatisfy { $0 == -2 })
        buffer.clear()
        #expect(buffer.buffer.allSatisfy { $0 == 0 })
    }

    @Test("an aligned buffer starts at a multiple of its alignment")
    func alignment() {
        for _ in 0..<16 {
            let buffer = RealTimeBuffer<Float>(capacity: 37, alignment: 64)
            #expect(UInt(bitPattern: buffer.base) % 64 == 0)
        }
    }

    @Test("a copy of an array holds its elements; an empty one has capacity 0")
    func copying() {
        let buffer = RealTimeBuffer(copying: [1.5, 2.5, 4.0])
        #expect(buffer.capacity == 3)
        #expect(Array(buffer.buffer) == [1.5, 2.5, 4.0])
        let empty = RealTimeBuffer<Int>(copying: [])
        #expect(empty.capacity == 0)
        #expect(empty.buffer.isEmpty)
    }

    @Test("its elements are deinitialized when the buffer goes away, and when it is replaced")
    func deinitializesElements() {
        let before = Tracked.alive
        do {
            var buffer = RealTimeBuffer(capacity: 4, repeating: Tracked())
            #expect(Tracked.alive == before + 1, "one instance, referenced four times")
            buffer = RealTimeBuffer(capacity: 2, repeating: Tracked())
            #expect(Tracked.alive == before + 1, "the replaced buffer released its instance")
            #expect(buffer.capacity == 2)
        }
        #expect(Tracked.alive == before)
    }
}
