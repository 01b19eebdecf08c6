import Dispatch
import Foundation
import SMF
import Sampler
import TestSupport
import Testing

@testable import Sessions

/// Signal-to-difference of two renders, in dB.
private func signalToDifference(_ a: [Float], _ b: [Float]) -> Double {
    var signal = 0.0
    var error = 0.0
    for index in a.indices {
        signal += Double(a[index] * a[index])
        error += Double((a[index] - b[index]) * (a[index] - b[index]))
    }
    return 10 * log10(signal / max(error, 1e-30))
}

@Suite("Renders that load only the song's samples", .serialized)
struct OnDemandRenderTests {
    private func options(_ loading: SamplerNode.SampleLoading, threads: Int = 1) -> RenderOptions {
        var options = RenderOptions()
        options.encoding = .f32
        options.sampleLoading = loading
        options.threads = threads
        return options
    }

    @Test("on demand renders the whole font's music: one thread, a channel split, stems")
    func sameMusic() throws {
        try withTemporaryFolder("on-demand") { directory in
            var counts: [Int: Int] = [:]
            for channel in [0, 1, 2, 3, 9] { counts[channel] = 30 }
            let file = busyFile(notes: counts)
            let whole = try OfflineRenderer(soundFont: bundledFontPath, options: options(.whole))
            _ = try whole.render(file, to: directory + "/whole.wav")
            let reference = try readFloatWAV(directory + "/whole.wav")
            #expect((reference.map(abs).max() ?? 0) > 0.01)
            for threads in [1, 2] {
                let renderer = try OfflineRenderer(
                    soundFont: bundledFontPath, options: options(.onDemand, threads: threads))
                _ = try renderer.render(file, to: directory + "/on-demand-\(threads).wav")
                let rendered = try readFloatWAV(directory + "/on-demand-\(threads).wav")
                #expect(rendered.count == reference.count)
                // Each sample in its own buffer (FluidSynth's dynamic loading) changes the last bits
                // of interpolation at sample edges; a split adds its own rounding (40 dB, as there).
                let snr = signalToDifference(reference, rendered)
                #expect(snr > (threads == 1 ? 60 : 40), "threads \(threads): signal-to-difference \(snr) dB")
            }
            let stems = try OfflineRenderer(soundFont: bundledFontPath, options: options(.onDemand))
                .renderStems(file, toFolder: directory + "/stems", mode: .channel)
            #expect(stems.stems.count >= 5)
            let mix = try readFloatWAV(directory + "/stems/mix.wav")
            #expect(mix.count == reference.count && signalToDifference(reference, mix) > 40)
        }
    }

    @Test("renders on several threads at once, each with its own song, load and free their samples safely")
    func concurrentRenders() throws {
        try withTemporaryFolder("on-demand-jobs") { directory in
            let songs = (0..<4).map { index in
                busyFile(notes: [index: 20, index + 4: 20, 9: 10], seed: UInt64(index + 1))
            }
            let whole = try OfflineRenderer(soundFont: bundledFontPath, options: options(.whole))
            for (index, song) in songs.enumerated() {
                _ = try whole.render(song, to: directory + "/whole-\(index).wav")
            }
            let first = try OfflineRenderer(soundFont: bundledFontPath, options: options(.onDemand))
            let renderers = [first] + (1..<4).map { _ in OfflineRenderer(sharingSoundFontOf: first) }
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do { _ = try renderers[index].render(songs[index], to: directory + "/on-demand-\(index).wav") } catch {
                    failures.add("\(error)")
                }
            }
            #expect(failures.all.isEmpty)
            for index in 0..<4 {
                let a = try readFloatWAV(directory + "/whole-\(index).wav")
                let b = try readFloatWAV(directory + "/on-demand-\(index).wav")
                #expect(a.count == b.count && signalToDifference(a, b) > 60, "song \(index)")
            }
        }
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ text: String) { lock.withLock { list.append(text) } }
    var all: [String] { lock.withLock { list } }
}
