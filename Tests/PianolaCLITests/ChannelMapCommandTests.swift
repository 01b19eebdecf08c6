import Foundation
import Pianola
import TestSupport
import Testing

@Suite("pianola play|render --channel-map", .serialized)
struct ChannelMapCommandTests {
    /// Channel `channel` (0-based) of an interleaved buffer.
    func channel(_ buffer: AudioFile.Buffer, _ channel: Int) -> [Float] {
        stride(from: channel, to: buffer.samples.count, by: buffer.channelCount).map { buffer.samples[$0] }
    }

    func render(_ arguments: [String], to path: String) throws -> AudioFile.Buffer {
        let result = try runPianola(
            ["render", "-q", demoSong, "-o", path, "-s", bundledFontPath, "--format", "f32"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try AudioFile.read(from: path)
    }

    @Test("an 8-channel render carries each part on its channels only, each part exactly the part alone")
    func partsOnTheirChannels() throws {
        try withTemporaryFolder("channel-map") { directory in
            let routed = try render(["--channel-map", "10:5-6", "--channels", "8"], to: directory + "/routed.wav")
            #expect(routed.channelCount == 8)
            let drums = try render(["--solo", "10"], to: directory + "/drums.wav")
            let band = try render(["--mute", "10"], to: directory + "/band.wav")
            // Outputs 3-4 and 7-8 carry nothing: exact zeros (below −120 dBFS by any measure).
            for silent in [2, 3, 6, 7] {
                let peak = channel(routed, silent).map(abs).max() ?? 1
                #expect(peak == 0, "output \(silent + 1) peaks at \(peak)")
            }
            // Outputs 5-6 are the drums alone, 1-2 the rest of the song alone, sample for sample.
            for (part, outputs) in [(drums, [4, 5]), (band, [0, 1])] {
                for (side, output) in outputs.enumerated() {
                    let expected = channel(part, side)
                    let got = channel(routed, output)
                    let common = min(expected.count, got.count)
                    #expect(common >= 44_100 * 15, "\(common) frames")
                    let differing = zip(got.prefix(common), expected.prefix(common)).filter { $0 != $1 }.count
                    #expect(differing == 0, "output \(output + 1): \(differing) samples differ from the part alone")
                    #expect(expected.prefix(common).contains { abs($0) > 0.01 }, "the part sounds")
                }
            }
            // JSON for pipelines says the layout.
            let json = try runPianola([
                "render", demoSong, "-o", directory + "/j.wav", "-s", bundledFontPath, "--channel-map", "drums:3-4",
                "--channel-map", "mix:2,1", "--json",
            ])
            #expect(json.status == 0, "\(json.stderr)")
            #expect(
                json.stdout.contains(#""channels":4"#) && json.stdout.contains(#""parts":["2-1","3-4"]"#),
                "\(json.stdout)")
        }
    }

    @Test("play --channel-map sends a device exactly the samples render --channel-map writes")
    func playEqualsRender() throws {
        try withTemporaryFolder("channel-map") { directory in
            let raw = directory + "/played.raw"
            let played = try runPianola([
                "play", demoSong, "-d", "file:FILE=\(raw),FORMAT=raw", "-s", bundledFontPath, "--period", "512",
                "--channel-map", "10:3-4",
            ])
            #expect(played.status == 0, "\(played.stderr)")
            let rendered = try render(["--channel-map", "10:3-4"], to: directory + "/rendered.wav")
            #expect(rendered.channelCount == 4)
            let stream = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let music = 44_100 * 15 * 4
            #expect(stream.count >= music && rendered.samples.count >= music)
            let differing = zip(stream.prefix(music), rendered.samples.prefix(music)).filter { $0 != $1 }.count
            #expect(differing == 0, "\(differing) samples differ")
            #expect(channel(rendered, 2).contains { abs($0) > 0.01 }, "the drums sound on output 3")
        }
    }

    @Test("maps that cannot work: one line each, and nothing written")
    func badMaps() throws {
        try withTemporaryFolder("channel-map") { directory in
            let cases: [([String], String)] = [
                (["--channel-map", "17:3-4"], "--channel-map: MIDI channel 17 is not 1…16"),
                (["--channel-map", "10:3"], "--channel-map: name two output channels (left and right) for each part"),
                (["--channel-map", "10"], "--channel-map '10': write MIDI:OUT, e.g. 10:3-4"),
                (["--channel-map", "bass:3-4"], "before ':' come MIDI channels (10, 1-4,6), drums or mix"),
                (["--channel-map", "10:3-4", "--channel-map", "9-10:5-6"], "MIDI channel 10 is routed twice"),
                (["--channel-map", "10:3-4", "--channels", "3"], "3 output channels cannot hold output 4"),
                (["--channels", "4"], "--channels goes with --channel-map"),
                (["--channel-map", "10:3-4", "--loudness", "-14"], "--channel-map renders one MIDI file"),
            ]
            for (arguments, message) in cases {
                let result = try runPianola(
                    ["render", demoSong, "-o", directory + "/out.wav", "-s", bundledFontPath] + arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
            let recording = try runPianola([
                "play", demoSong, "-d", "null", "-s", bundledFontPath, "--channel-map", "10:3-4", "--record-audio",
                directory + "/heard.wav",
            ])
            #expect(recording.status == 1)
            #expect(recording.stderr.contains("it does not take a channel map"), "\(recording.stderr)")
        }
    }
}
