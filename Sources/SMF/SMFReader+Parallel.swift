import Dispatch
import Synchronization

extension SMFReader {
    /// Files smaller than this are read on one thread: starting threads would cost more.
    static let parallelMinimumBytes = 512 * 1024

    /// Reads the leading run of `MTrk` chunks whose declared lengths chain one to the next on
    /// `threads` threads, and takes the tracks (with their diagnostics) of each chunk that ended
    /// where its length said, in file order, up to the first that did not or that threw. Reading a
    /// track depends only on the bytes, its index and where it starts, so what is taken is exactly
    /// what reading one track after another gives; the sequential loop goes on from `position`.
    mutating func readTracksAtOnce<Sink: TrackSink>(_ tracks: inout [Sink], _ position: inout Int, end: Int) {
        guard end - position >= Self.parallelMinimumBytes else { return }
        var chunks: [Int] = []
        var next = position
        while next + 8 <= end && matches("MTrk", at: next) {
            chunks.append(next)
            next += 8 + u32(next + 4)
        }
        if next > end { chunks.removeLast() }
        guard chunks.count > 1 else { return }

        let results = UnsafeMutableBufferPointer<TrackRead<Sink>?>.allocate(capacity: chunks.count)
        results.initialize(repeating: nil)
        defer {
            results.deinitialize()
            results.deallocate()
        }
        nonisolated(unsafe) let shared = results
        nonisolated(unsafe) let reader = SMFReader(bytes: bytes, strict: strict)
        let order = chunks
        // Larger chunks first, so the threads finish together.
        let byCost = order.indices.sorted { reader.u32(order[$0] + 4) > reader.u32(order[$1] + 4) }
        let workers = min(threads, chunks.count)
        // Each thread takes the next chunk when it is done with one: no thread waits on a fixed share.
        let claimed = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let slot = claimed.wrappingAdd(1, ordering: .relaxed).oldValue
                guard slot < byCost.count else { return }
                let index = byCost[slot]
                var own = reader
                guard
                    let (track, after) = try? own.readTrack(
                        index: index, chunk: order[index], fileEnd: end, into: Sink.self)
                else { continue }
                shared[index] = TrackRead(track: track, next: after, diagnostics: own.diagnostics)
            }
        }
        for (index, chunk) in chunks.enumerated() {
            let declaredEnd = chunk + 8 + u32(chunk + 4)
            guard tracks.count == index, let read = results[index], read.next == declaredEnd else { return }
            tracks.append(read.track)
            diagnostics += read.diagnostics
            position = read.next
        }
    }

    /// One track read on its own: the track, where the next chunk starts, and its diagnostics.
    struct TrackRead<Sink> {
        var track: Sink
        var next: Int
        var diagnostics: [MIDIFileDiagnostic]
    }
}
