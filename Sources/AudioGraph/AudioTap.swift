/// Something that watches a node's output on the render thread: the meters (module Meters), a
/// recorder's file tap, capture for tests.
/// `process` must not allocate, lock or block.
public protocol AudioTap: AnyObject, Sendable {
    /// Called on the render thread each quantum, right after the tapped node renders: `buffer` is its output,
    /// `frameCount` the frames rendered and `time` the quantum's start on the engine's clock. The nodes
    /// downstream read the buffer afterwards, so a tap only reads it. Must not allocate, lock or block.
    func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime)
}
