import AudioGraph
import CFloatEnvironment

#if canImport(Glibc)
    import Glibc
#endif

/// The reverb's delay network (Jot): sixteen delay lines, each with a damping filter that sets
/// its loop gain for the preset's decay time (and a faster decay of high frequencies), fed back
/// through a Hadamard matrix. The input enters every line; two orthogonal sign patterns over the
/// lines make decorrelated left and right outputs.
///
/// Every line is a ring of a power-of-two size indexed by the running sample counter
/// (`counter & mask`), so the loop never wraps positions one by one; the sixteen lines' damping
/// filters run as one SIMD16 vector, with the processor flushing subnormal results to zero (in
/// software, frame by frame, on an architecture without that mode). Render-thread code: all memory
/// is allocated in `init`, and freed with the network.
struct FeedbackDelayNetwork: ~Copyable {
    static let lines = 16
    /// Base line lengths in ms (mutually prime once in samples), scaled by the preset's size.
    static let baseLengths: [Double] = [
        23.1, 26.9, 29.3, 31.9, 34.7, 37.3, 39.7, 42.1, 44.9, 47.3, 50.9, 53.3, 56.9, 59.3, 63.1, 67.9,
    ]
    static let maximumBlock = 128

    /// Line k's ring starts at `lineRings.base + k * lineStride`: a power-of-two ring plus a pad that
    /// keeps the sixteen read positions out of one another's cache sets.
    private let lineRings: RealTimeBuffer<Float>
    private let lineBits: Int
    private let lineStride: Int
    /// A block of frames by sixteen lines, frame-major, 64-byte aligned: the lines' outputs are
    /// gathered here, and what they take in is scattered from here.
    private let matrix = RealTimeBuffer<Float>(capacity: FeedbackDelayNetwork.maximumBlock * 16, alignment: 64)
    /// Frames per block: `maximumBlock`, or fewer if the shortest line is shorter.
    private var blockCapacity = 1
    private let lineDelays = RealTimeBuffer<Int>(capacity: FeedbackDelayNetwork.lines, repeating: 1)
    /// Per-line loop gain and damping pole (loaded as vectors per block; set element by element
    /// in memory, since a SIMD subscript setter is a generic call in unoptimized builds).
    private let lineGains = RealTimeBuffer<Float>(capacity: FeedbackDelayNetwork.lines)
    private let lineDamping = RealTimeBuffer<Float>(capacity: FeedbackDelayNetwork.lines)
    private var lineFilters = SIMD16<Float>.zero

    /// A network with room for the largest preset at `sampleRate`.
    init(sampleRate: Double) {
        let longest = ReverbPreset.table.map(\.size).max()!
        lineBits = DelayRing.bits(above: Int(Self.baseLengths.max()! / 1_000 * longest * sampleRate) + 2)
        lineStride = (1 << lineBits) + 16 + 3
        lineRings = RealTimeBuffer(capacity: Self.lines * lineStride)
    }

    /// Sets the lines up for `preset` and clears them (render thread on a preset change: only
    /// preallocated memory is touched).
    mutating func configure(_ preset: ReverbPreset, sampleRate: Double) {
        let mid = preset.reverberationTime
        let high = mid * preset.highDecayRatio
        let omega = 2 * Double.pi * 1_000 / sampleRate
        for line in 0..<Self.lines {
            // Odd lengths: fewer shared factors.
            let length = Int(Self.baseLengths[line] / 1_000 * preset.size * sampleRate) | 1
            lineDelays[line] = length
            // Damping: a one-pole low-pass whose gain at Nyquist gives the high decay; its gain at
            // DC is set so that the loop's gain at 1 kHz gives the mid decay exactly.
            let seconds = Double(length) / sampleRate
            let gainMid = pow(10, -3 * seconds / mid)
            let gainHigh = pow(10, -3 * seconds / high)
            var gainDC = gainMid
            var pole = 0.0
            for _ in 0..<4 {
                pole = (gainDC - gainHigh) / (gainDC + gainHigh)
                let response = (1 - pole) / ((1 - 2 * pole * cos(omega) + pole * pole).squareRoot())
                gainDC = gainMid / response
            }
            lineGains[line] = Float(gainDC * (1 - pole))
            lineDamping[line] = Float(pole)
        }
        var shortest = Int.max
        for line in 0..<Self.lines { shortest = min(shortest, lineDelays[line]) }
        blockCapacity = max(1, min(Self.maximumBlock, shortest))
        lineFilters = .zero
        lineRings.clear()
    }

    /// Replaces `count` frames of diffused input in `left` and `right`, from sample `start` on,
    /// with the network's wet output, in blocks of at most `blockCapacity` frames.
    mutating func process(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int, from start: Int
    ) {
        // The recursion runs with the processor flushing subnormal results to zero (so no per-frame
        // flush sits on its critical path); where that mode does not exist, it flushes in software.
        let previousMode = pianola_subnormals_flush()
        defer { pianola_subnormals_restore(previousMode) }
        let hardwareFlush = previousMode & PIANOLA_SUBNORMALS_UNSUPPORTED == 0
        var done = 0
        while done < count {
            let block = min(blockCapacity, count - done)
            run(block, left + done, right + done, counter: start &+ done, hardwareFlush: hardwareFlush)
            done += block
        }
    }

    /// The network over `count` frames (at most `blockCapacity`, so at most the shortest line's
    /// delay: every line's output for the block is already in its ring) from sample `counter` on.
    /// Three passes: each line's output stretch copied into a frame-major matrix; the network's one
    /// recursion (damping) and the groups' half of the Hadamard feedback, frame by frame on whole
    /// 16-line vectors; the lanes' half, the input and the outputs, four frames at a time, each
    /// line's input stretch copied from the matrix back into its ring.
    /// `hardwareFlush`: the processor flushes subnormal results (else the recursion flushes in
    /// software, frame by frame).
    ///
    /// One function on purpose, though long: the passes share the block's pointers and ring
    /// positions, and run as three methods (each `@inline(__always)`) the reverb measured 15–20 %
    /// slower per frame in the effects benchmark. The comments name the passes instead.
    @inline(__always)
    private mutating func run(
        _ count: Int, _ inLeft: UnsafeMutablePointer<Float>, _ inRight: UnsafeMutablePointer<Float>, counter: Int,
        hardwareFlush: Bool
    ) {
        let lines = lineRings.base
        let lineMask = (1 << lineBits) - 1
        let lineStride = self.lineStride
        let matrix = self.matrix.base
        // Pass 1: line k's outputs for the block are `count` samples from `counter - delay`; four
        // lines by four frames at a time, transposed in registers.
        let ringSize = lineMask &+ 1
        let whole = count & ~3
        for group in stride(from: 0, to: Self.lines, by: 4) {
            let starts = SIMD4(
                (counter &- lineDelays[group]) & lineMask, (counter &- lineDelays[group &+ 1]) & lineMask,
                (counter &- lineDelays[group &+ 2]) & lineMask, (counter &- lineDelays[group &+ 3]) & lineMask)
            var frame = 0
            if (starts &+ count).max() <= ringSize {
                let a = UnsafeRawPointer(lines + (group &* lineStride &+ starts[0]))
                let b = UnsafeRawPointer(lines + ((group &+ 1) &* lineStride &+ starts[1]))
                let c = UnsafeRawPointer(lines + ((group &+ 2) &* lineStride &+ starts[2]))
                let d = UnsafeRawPointer(lines + ((group &+ 3) &* lineStride &+ starts[3]))
                let target = UnsafeMutableRawPointer(matrix + group)
                while frame < whole {
                    let bytes = frame &<< 2
                    let rows = Self.transposed(
                        a.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        b.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        c.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self),
                        d.loadUnaligned(fromByteOffset: bytes, as: SIMD4<Float>.self))
                    let row = target + frame &<< 6
                    row.storeBytes(of: rows.0, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.1, toByteOffset: 64, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.2, toByteOffset: 128, as: SIMD4<Float>.self)
                    row.storeBytes(of: rows.3, toByteOffset: 192, as: SIMD4<Float>.self)
                    frame &+= 4
                }
            }
            // The rest (and a stretch that wraps around its ring) one by one.
            for line in group..<group &+ 4 {
                let ring = lines + line &* lineStride
                let column = matrix + line
                let start = starts[line &- group]
                for rest in frame..<count { column[rest &<< 4] = ring[(start &+ rest) & lineMask] }
            }
        }
        // Pass 2: the recursion (each line's damping filter), and the first half of the Hadamard
        // feedback: line k = 4g + l, and Sylvester's H16 is H4 over the groups g times H4 over the
        // lanes l. This pass mixes the four groups (whole-vector sums, no shuffles) and overwrites
        // row `frame` with the result; pass 3 mixes the lanes, where it holds each line's frames as
        // one vector after the transpose. The rings hold four times the signal (the Hadamard
        // transform's gain, not normalized away: the 1/4 is in the loop gains, exactly, being a
        // power of two).
        let gains = UnsafeRawPointer(lineGains.base).loadUnaligned(as: SIMD16<Float>.self) * 0.25
        let damping = UnsafeRawPointer(lineDamping.base).loadUnaligned(as: SIMD16<Float>.self)
        var filters = lineFilters
        let rows = UnsafeMutableRawPointer(matrix)
        for frame in 0..<count {
            let row = rows + frame &<< 6
            let next = gains * row.load(as: SIMD16<Float>.self) + damping * filters
            filters = hardwareFlush ? next : Subnormals.flushed(next)
            let groups = Self.h4(
                filters.lowHalf.lowHalf, filters.lowHalf.highHalf, filters.highHalf.lowHalf, filters.highHalf.highHalf)
            row.storeBytes(of: groups.0, as: SIMD4<Float>.self)
            row.storeBytes(of: groups.1, toByteOffset: 16, as: SIMD4<Float>.self)
            row.storeBytes(of: groups.2, toByteOffset: 32, as: SIMD4<Float>.self)
            row.storeBytes(of: groups.3, toByteOffset: 48, as: SIMD4<Float>.self)
        }
        // (Not flushed here: a flush at the block's end would make the output depend on where the
        // blocks fall. With silent lines the states decay by their poles into the processor's zero.)
        lineFilters = filters
        // Pass 3: the lanes' half of the feedback, four frames at a time (transposed, each line's
        // four frames are one vector); then the input, and line k takes in its column at `counter`.
        // Rows 1 and 2 of the Hadamard matrix are two orthogonal sign patterns over the lines: the
        // decorrelated left and right outputs. The input enters every line, the left channel with
        // one sign, the right with alternating signs (the Hadamard image of lines 0 and 1).
        // What a line takes in, and the outputs, are flushed below 2⁻⁵⁰ (−301 dB), off the
        // recursion's critical path: so the tail ends in exact zeros soon after the lines have, and
        // what leaves the network is 0 or at least 2⁻⁵⁰ in magnitude, whatever mode the caller runs
        // in. Nothing here is subnormal: the processor flushes such results to zero; where it
        // cannot, the filters were flushed frame by frame.
        let write = counter & lineMask
        var frame = 0
        if write &+ count <= ringSize {
            let source = UnsafeRawPointer(matrix)
            while frame < whole {
                let row = source + frame &<< 6
                let x = UnsafeRawPointer(inLeft + frame).loadUnaligned(as: SIMD4<Float>.self)
                let y = UnsafeRawPointer(inRight + frame).loadUnaligned(as: SIMD4<Float>.self)
                let (sum, difference) = (x + y, x - y)
                for group in stride(from: 0, to: Self.lines, by: 4) {
                    let columns = Self.transposed(
                        row.load(fromByteOffset: group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 64 &+ group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 128 &+ group &<< 2, as: SIMD4<Float>.self),
                        row.load(fromByteOffset: 192 &+ group &<< 2, as: SIMD4<Float>.self))
                    let mixed = Self.h4(columns.0, columns.1, columns.2, columns.3)
                    if group == 0 {
                        UnsafeMutableRawPointer(inLeft + frame).storeBytes(
                            of: Subnormals.flushed(mixed.1 * 0.25), as: SIMD4<Float>.self)
                        UnsafeMutableRawPointer(inRight + frame).storeBytes(
                            of: Subnormals.flushed(mixed.2 * 0.25), as: SIMD4<Float>.self)
                    }
                    let target = UnsafeMutableRawPointer(lines + (group &* lineStride &+ write &+ frame))
                    target.storeBytes(of: Subnormals.flushed(mixed.0 + sum), as: SIMD4<Float>.self)
                    (target + lineStride &<< 2).storeBytes(
                        of: Subnormals.flushed(mixed.1 + difference), as: SIMD4<Float>.self)
                    (target + lineStride &<< 3).storeBytes(of: Subnormals.flushed(mixed.2 + sum), as: SIMD4<Float>.self)
                    (target + 3 &* lineStride &<< 2).storeBytes(
                        of: Subnormals.flushed(mixed.3 + difference), as: SIMD4<Float>.self)
                }
                frame &+= 4
            }
        }
        // The rest (and a block that wraps around the rings) frame by frame.
        for rest in frame..<count {
            // Lane g of `mixed.l` is line 4g + l.
            let v = rows.load(fromByteOffset: rest &<< 6, as: SIMD16<Float>.self)
            let mixed = Self.h4(v.evenHalf.evenHalf, v.oddHalf.evenHalf, v.evenHalf.oddHalf, v.oddHalf.oddHalf)
            let (x, y) = (inLeft[rest], inRight[rest])
            let (sum, difference) = (SIMD4(repeating: x + y), SIMD4(repeating: x - y))
            let taken = (
                Subnormals.flushed(mixed.0 + sum), Subnormals.flushed(mixed.1 + difference),
                Subnormals.flushed(mixed.2 + sum), Subnormals.flushed(mixed.3 + difference)
            )
            let outputs = Subnormals.flushed(SIMD2(mixed.1[0], mixed.2[0]) * 0.25)
            inLeft[rest] = outputs.x
            inRight[rest] = outputs.y
            let position = (write &+ rest) & lineMask
            for quad in 0..<4 {
                // Lines 4·quad … 4·quad + 3.
                let ring = lines + ((quad &<< 2) &* lineStride &+ position)
                ring[0] = taken.0[quad]
                ring[lineStride] = taken.1[quad]
                ring[2 &* lineStride] = taken.2[quad]
                ring[3 &* lineStride] = taken.3[quad]
            }
        }
    }

    /// Sylvester's H4 (unnormalized) over four vectors, element by element: the groups' half of
    /// the 16-point transform over the four groups of a frame, and the lanes' half over the four
    /// lines of a group.
    @inline(__always)
    private static func h4(
        _ x0: SIMD4<Float>, _ x1: SIMD4<Float>, _ x2: SIMD4<Float>, _ x3: SIMD4<Float>
    ) -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        let (a, b, c, d) = (x0 + x1, x0 - x1, x2 + x3, x2 - x3)
        return (a + c, b + d, a - c, b - d)
    }

    /// A 4 × 4 matrix given by rows, returned by columns.
    @inline(__always)
    private static func transposed(
        _ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>
    ) -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        (
            SIMD4(a[0], b[0], c[0], d[0]), SIMD4(a[1], b[1], c[1], d[1]), SIMD4(a[2], b[2], c[2], d[2]),
            SIMD4(a[3], b[3], c[3], d[3])
        )
    }
}
