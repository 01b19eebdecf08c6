import Testing

@testable import AudioGraph

@Suite("Sizes out of range: an audio buffer clamps them instead of trapping")
struct ClampedSizeTests {
    @Test("AudioBuffer: no channels or no frames (or fewer) make a buffer of one channel and one frame")
    func audioBufferClamps() {
        for (channels, frames) in [(0, 512), (2, 0), (-1, -1), (Int.min, 1)] {
            let buffer = AudioBuffer(channelCount: channels, frameCapacity: frames)
            #expect(buffer.channelCount == max(1, channels), "\(channels) × \(frames)")
            #expect(buffer.frameCapacity == max(1, frames) && buffer.frameLength == buffer.frameCapacity)
            buffer.channel(0)[0] = 0.5
            #expect(buffer.samples(channel: 0).first == 0.5)
            buffer.clear(frames: .max)
            #expect(buffer.interleaved().allSatisfy { $0 == 0 })
        }
    }
}
