import Foundation
import SMF
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("pianola play --driver jack --jack-multi: a port pair per MIDI channel", .serialized)
struct JACKMultiCommandTests {
    /// Sixteen synthesizers on two cores: without reverb and chorus, so that the server's
    /// cycles keep their deadlines.
    static let synth = ["-s", bundledFontPath, "--synth-reverb", "off", "--synth-chorus", "off"]

    /// Piano notes on MIDI channel 1 at 1.0, 1.4 and 1.8 s, a snare on channel 10 at 1.2 s (120
    /// BPM, 960 ticks a second); nothing on the other channels.
    func writeTwoChannelSong(to path: String) throws {
        var events: [MIDIFile.Event] = []
        for (index, note) in [60, 64, 67].enumerated() {
            let start = 960 + index * 384
            events.append(MIDIFile.Event(tick: start, .channel(.noteOn(channel: 0, note: UInt8(note), velocity: 100))))
            events.append(
                MIDIFile.Event(tick: start + 300, .channel(.noteOff(channel: 0, note: UInt8(note), velocity: 0))))
        }
        events.append(MIDIFile.Event(tick: 1_152, .channel(.noteOn(channel: 9, note: 38, velocity: 120))))
        events.append(MIDIFile.Event(tick: 1_300, .channel(.noteOff(channel: 9, note: 38, velocity: 0))))
        events.sort { $0.tick < $1.tick }
        events.append(MIDIFile.Event(tick: 2_112, .meta(.endOfTrack)))
        try MIDIFile(format: .singleTrack, tracks: [MIDIFile.Track(events: events)]).write(to: path)
    }

    @Test("each channel on its own ports: what JACK records equals render --channel-map, silence elsewhere")
    func channelsApart() throws {
        let server = try jackServer()
        try withTemporaryFolder("jack-multi") { directory in
            let song = directory + "/two.mid"
            try writeTwoChannelSong(to: song)
            let captured = directory + "/captured.wav"
            let recorded = ["ch1_left", "ch1_right", "ch10_left", "ch10_right", "ch2_left"].map { "pianola:" + $0 }
            var clean = false
            for _ in 0..<3 where !clean {
                let play = JACKCommandTests.Background(
                    ["play", song, "--driver", "jack", "--jack-multi"] + Self.synth, server: server)
                var ports: [String] = []
                for _ in 0..<500 where !ports.contains("pianola:ch16_right") {
                    usleep(20_000)
                    ports = server.ports()
                }
                let expected = (1...16).flatMap { ["pianola:ch\($0)_left", "pianola:ch\($0)_right"] }
                #expect(ports.filter { $0.hasPrefix("pianola:") } == expected, "\(ports)")
                unlink(captured)
                #expect(server.capture(recorded, seconds: 2.6, to: captured) == 0)
                let result = try #require(play.wait(seconds: 20), "play did not end")
                #expect(result.status == 0, "\(result.stderr)")
                clean = result.stderr.contains("two.mid: finished, 0 underruns")
            }
            try #require(clean, "every try had xruns")
            // The same parts rendered offline into a 32-channel file (channel 1 the mix's part).
            let maps = (2...16).flatMap { ["--channel-map", "\($0):\(2 * $0 - 1)-\(2 * $0)"] }
            let rendered = try runPianola(
                [
                    "render", "-q", song, "-o", directory + "/rendered.wav", "--rate", "48000", "--format", "f32",
                ] + maps + Self.synth)
            try #require(rendered.status == 0, "\(rendered.stderr)")
            let heard = try readFloatWAVSamples(captured)
            let reference = try readFloatWAVSamples(directory + "/rendered.wav")
            func channel(_ samples: [Float], _ index: Int, of count: Int) -> [Float] {
                stride(from: index, to: samples.count, by: count).map { samples[$0] }
            }
            let heardPiano = channel(heard, 0, of: 5)
            let referencePiano = channel(reference, 0, of: 32)
            // The first piano note lines the recording up with the render (see playEqualsRender).
            let onsetHeard = try #require(heardPiano.firstIndex { abs($0) > 1e-4 }, "channel 1 is silent")
            let onsetReference = try #require(referencePiano.firstIndex { abs($0) > 1e-4 })
            let count = Int(1.2 * 48_000)
            try #require(heardPiano.count >= onsetHeard + count)
            for (recordedIndex, renderedIndex) in [(0, 0), (1, 1), (2, 18), (3, 19)] {
                let got = channel(heard, recordedIndex, of: 5)
                let want = channel(reference, renderedIndex, of: 32)
                let differing = (0..<count).filter { got[onsetHeard + $0] != want[onsetReference + $0] }.count
                #expect(differing == 0, "\(recorded[recordedIndex]): \(differing) of \(count) samples differ")
                #expect(
                    got[onsetHeard..<(onsetHeard + count)].contains { abs($0) > 1e-2 }, "\(recorded[recordedIndex])")
            }
            // The snare is on channel 10's ports only, the piano on channel 1's only.
            let drums = channel(heard, 2, of: 5)
            // 0.2 s after the first piano note (both start on FluidSynth's 64-frame blocks).
            let snare = try #require(drums.firstIndex { abs($0) > 1e-4 }, "channel 10 is silent")
            #expect(abs(snare - onsetHeard - 9_600) <= 128, "the snare \(snare - onsetHeard) frames after the piano")
            #expect(channel(heard, 4, of: 5).allSatisfy { abs($0) < 1e-6 }, "channel 2, which plays nothing, sounds")
        }
    }

    @Test("--jack-multi refuses ALSA and --channel-map, in one line each")
    func refusals() throws {
        try withTemporaryFolder("jack-multi") { directory in
            let song = directory + "/two.mid"
            try writeTwoChannelSong(to: song)
            for (arguments, words) in [
                (["play", song, "--jack-multi"], "--jack-multi is for JACK: add --driver jack"),
                (
                    ["play", song, "--driver", "jack", "--jack-multi", "--channel-map", "10:3-4"],
                    "leave out --channel-map"
                ),
                (["live", "--driver", "jack", "--jack-multi", "--channel-map", "10:3-4"], "leave out --channel-map"),
            ] {
                let result = try runPianola(arguments)
                #expect(result.status != 0)
                let lines = result.stderr.split(separator: "\n").filter {
                    $0.hasPrefix("Error:") || $0.hasPrefix("pianola:")
                }
                #expect(lines.count == 1 && lines[0].contains(words), "\(arguments): \(result.stderr)")
            }
        }
    }
}
