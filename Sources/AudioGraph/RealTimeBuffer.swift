/// A fixed number of elements in one heap block that the buffer owns: allocated and initialized
/// once, in `init` (off the audio thread), and freed by the buffer's own `deinit`, so that no
/// owner pairs an `allocate` with a `deallocate` by hand.
///
/// After `init` it is allocation-free and lock-free: reading and writing elements (through the
/// subscript or `base`), `update(repeating:)` and `clear()` touch only the block. It is the
/// render state of nodes and kernels: delay lines, scratch blocks, per-band state.
///
/// It is noncopyable (one owner frees the block once); an owner that needs another size assigns
/// a new buffer, which frees the old one. Like a pointer, and unlike an array, it does not treat
/// writing an element as mutating the buffer: elements can be written through a `let`, with no
/// copy-on-write check, no reference count and no exclusivity check, as fast as a raw pointer.
/// It is not synchronized: one thread writes it at a time (the render thread while rendering).
/// The subscript checks its index in debug builds only.
public struct RealTimeBuffer<Element>: ~Copyable {
    /// The first element; the block holds `capacity` of them. Valid as long as the buffer lives:
    /// kernels take it into a local for their inner loops.
    public let base: UnsafeMutablePointer<Element>
    /// The number of elements (fixed).
    public let capacity: Int

    /// `capacity` elements, each `value`, at an address that is a multiple of `alignment` bytes
    /// (by default the element's own alignment). Allocates: call it off the audio thread.
    @inlinable
    public init(capacity: Int, repeating value: Element, alignment: Int = MemoryLayout<Element>.alignment) {
        precondition(capacity >= 0, "a buffer's capacity cannot be negative")
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(
            byteCount: max(1, capacity * MemoryLayout<Element>.stride),
            alignment: max(alignment, MemoryLayout<Element>.alignment)
        ).bindMemory(to: Element.self, capacity: capacity)
        base.initialize(repeating: value, count: capacity)
    }

    /// A copy of `elements` (its capacity is their count). Allocates: call it off the audio thread.
    @inlinable
    public init(copying elements: [Element]) {
        let count = elements.count
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: max(1, count * MemoryLayout<Element>.stride), alignment: MemoryLayout<Element>.alignment
        ).bindMemory(to: Element.self, capacity: count)
        elements.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { block.initialize(from: start, count: count) }
        }
        capacity = count
        base = block
    }

    @inlinable
    deinit {
        base.deinitialize(count: capacity)
        UnsafeMutableRawPointer(base).deallocate()
    }

    /// The element at `index` (0 ..< `capacity`).
    @inlinable
    public subscript(index: Int) -> Element {
        @inline(__always) unsafeAddress {
            assert(index >= 0 && index < capacity, "index out of range")
            return UnsafePointer(base + index)
        }
        @inline(__always) nonmutating unsafeMutableAddress {
            assert(index >= 0 && index < capacity, "index out of range")
            return base + index
        }
    }

    /// The whole block, for the standard library's buffer operations.
    @inlinable
    public var buffer: UnsafeMutableBufferPointer<Element> {
        @inline(__always) get { UnsafeMutableBufferPointer(start: base, count: capacity) }
    }

    /// Sets every element to `value`.
    @inlinable
    public func update(repeating value: Element) {
        base.update(repeating: value, count: capacity)
    }
}

extension RealTimeBuffer where Element: AdditiveArithmetic {
    /// `capacity` zeros, at an address that is a multiple of `alignment` bytes (by default the
    /// element's own alignment). Allocates: call it off the audio thread.
    @inlinable
    public init(capacity: Int, alignment: Int = MemoryLayout<Element>.alignment) {
        self.init(capacity: capacity, repeating: .zero, alignment: alignment)
    }

    /// Sets every element to zero.
    @inlinable
    public func clear() {
        base.update(repeating: .zero, count: capacity)
    }
}
