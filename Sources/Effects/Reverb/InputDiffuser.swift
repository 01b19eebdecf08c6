import AudioGraph

/// The reverb's input diffusion: four Schroeder allpasses per channel in series, for a fast
/// build-up of echo density before the delay network. The right channel's are longer, so the
/// network takes in decorrelated inputs. Render-thread code: all memory is allocated in `init`,
/// and freed with the diffuser.
struct InputDiffuser: ~Copyable {
    /// The allpasses' delays in ms, in order, and their gain.
    static let lengths: [Double] = [4.77, 3.59, 12.73, 9.3]
    static let stages = 4
    static let gain = 0.7
    /// The right channel's allpasses are this much longer: decorrelated inputs.
    static let rightScale = 1.113

    /// Stage s of channel c is ring number `s * 2 + c`, each of `1 << bits` samples.
    private let rings: RealTimeBuffer<Float>
    private let bits: Int
    private let delays = RealTimeBuffer<Int>(capacity: 2 * InputDiffuser.stages, repeating: 1)

    /// Allpasses with room for their delays at `sampleRate`.
    init(sampleRate: Double) {
        bits = DelayRing.bits(above: Int(Self.lengths.max()! * Self.rightScale / 1_000 * sampleRate) + 2)
        rings = RealTimeBuffer(capacity: 2 * Self.stages << bits)
    }

    /// Sets the delays for `sampleRate` and clears the allpasses (render thread on a preset change:
    /// only preallocated memory is touched).
    mutating func configure(sampleRate: Double) {
        for stage in 0..<Self.stages {
            for channel in 0..<2 {
                let scale = channel == 0 ? 1 : Self.rightScale
                delays[stage * 2 + channel] = Int(Self.lengths[stage] * scale / 1_000 * sampleRate) | 1
            }
        }
        rings.clear()
    }

    /// `count` frames of `left` and `right`, from sample `start` on, through the allpasses, in place.
    /// The input runs through them in pieces shorter than every allpass's delay, so a piece has no
    /// recursion: each channel's four stages run together over it, eight frames at a time, on
    /// contiguous stretches of their rings.
    mutating func process(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int, from start: Int
    ) {
        let size = 1 << bits
        let mask = size - 1
        var shortest = Int.max
        for index in 0..<2 * Self.stages { shortest = min(shortest, delays[index]) }
        let rings = self.rings.base
        let g = Float(Self.gain)
        let gain = SIMD8<Float>(repeating: g)
        var offset = 0
        while offset < count {
            // A piece: no longer than the shortest delay (so it has no recursion), and cut where
            // any ring's read or write stretch would wrap around (so every stretch is contiguous).
            let now = start &+ offset
            let writeStart = now & mask
            var length = min(shortest, count - offset, size - writeStart)
            for index in 0..<2 * Self.stages {
                length = min(length, size - ((now &- delays[index]) & mask))
            }
            for channel in 0..<2 {
                // The four stages of a channel together, eight frames at a time in registers.
                let x = (channel == 0 ? left : right) + offset
                let ring0 = rings + (channel << bits)
                let ring1 = rings + ((2 &+ channel) << bits)
                let ring2 = rings + ((4 &+ channel) << bits)
                let ring3 = rings + ((6 &+ channel) << bits)
                let read0 = UnsafeRawPointer(ring0 + ((now &- delays[channel]) & mask))
                let read1 = UnsafeRawPointer(ring1 + ((now &- delays[2 &+ channel]) & mask))
                let read2 = UnsafeRawPointer(ring2 + ((now &- delays[4 &+ channel]) & mask))
                let read3 = UnsafeRawPointer(ring3 + ((now &- delays[6 &+ channel]) & mask))
                let write0 = UnsafeMutableRawPointer(ring0 + writeStart)
                let write1 = UnsafeMutableRawPointer(ring1 + writeStart)
                let write2 = UnsafeMutableRawPointer(ring2 + writeStart)
                let write3 = UnsafeMutableRawPointer(ring3 + writeStart)
                let signal = UnsafeMutableRawPointer(x)
                var frame = 0
                @inline(__always) func stage(
                    _ v: SIMD8<Float>, _ read: UnsafeRawPointer, _ write: UnsafeMutableRawPointer, _ bytes: Int
                ) -> SIMD8<Float> {
                    let delayed = read.loadUnaligned(fromByteOffset: bytes, as: SIMD8<Float>.self)
                    let fed = Subnormals.flushed(v + gain * delayed)
                    write.storeBytes(of: fed, toByteOffset: bytes, as: SIMD8<Float>.self)
                    return delayed - gain * fed
                }
                while frame + 8 <= length {
                    let bytes = frame &<< 2
                    var v = signal.loadUnaligned(fromByteOffset: bytes, as: SIMD8<Float>.self)
                    v = stage(v, read0, write0, bytes)
                    v = stage(v, read1, write1, bytes)
                    v = stage(v, read2, write2, bytes)
                    v = stage(v, read3, write3, bytes)
                    signal.storeBytes(of: v, toByteOffset: bytes, as: SIMD8<Float>.self)
                    frame &+= 8
                }
                @inline(__always) func stage(
                    _ v: Float, _ read: UnsafeRawPointer, _ write: UnsafeMutableRawPointer, _ bytes: Int
                ) -> Float {
                    let delayed = read.load(fromByteOffset: bytes, as: Float.self)
                    let fed = Subnormals.flushed(SIMD2(repeating: v + g * delayed)).x
                    write.storeBytes(of: fed, toByteOffset: bytes, as: Float.self)
                    return delayed - g * fed
                }
                while frame < length {
                    let bytes = frame &<< 2
                    var v = x[frame]
                    v = stage(v, read0, write0, bytes)
                    v = stage(v, read1, write1, bytes)
                    v = stage(v, read2, write2, bytes)
                    v = stage(v, read3, write3, bytes)
                    x[frame] = v
                    frame &+= 1
                }
            }
            offset += length
        }
    }
}
