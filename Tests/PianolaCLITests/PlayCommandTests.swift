import Foundation
import Pianola
import TestSupport
import Testing

@Suite("pianola play and devices", .serialized)
struct PlayCommandTests {
    @Test("play on a device (the ALSA file plugin) sends exactly the samples `render` writes")
    func playEqualsRender() throws {
        try withTemporaryFolder("play") { directory in
            let raw = directory + "/played.raw"
            var result = try runPianola([
                "play", demoSong, "-d", "file:FILE=\(raw),FORMAT=raw", "-s", bundledFontPath, "--period", "512",
                "--periods", "3",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("float32, 512 × 3 frames"))
            result = try runPianola([
                "render", "-q", demoSong, "-o", directory + "/rendered.wav", "-s", bundledFontPath, "--format", "f32",
            ])
            #expect(result.status == 0)
            let played = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let wav = try Data(contentsOf: URL(fileURLWithPath: directory + "/rendered.wav"))
            // libsndfile's float WAV: find the data chunk.
            var offset = 12
            var rendered: [Float] = []
            while offset + 8 <= wav.count {
                let id = String(decoding: wav[offset..<offset + 4], as: UTF8.self)
                let size =
                    Int(wav[offset + 4]) | Int(wav[offset + 5]) << 8 | Int(wav[offset + 6]) << 16 | Int(wav[offset + 7])
                    << 24
                if id == "data" {
                    rendered = wav[(offset + 8)..<(offset + 8 + size)].withUnsafeBytes {
                        Array($0.bindMemory(to: Float.self))
                    }
                    break
                }
                offset += 8 + size + (size & 1)
            }
            let music = 44_100 * 15 * 2
            #expect(played.count >= music && rendered.count >= music)
            let mismatches = zip(played.prefix(music), rendered.prefix(music)).filter { $0 != $1 }.count
            #expect(mismatches == 0, "\(mismatches) samples differ")
        }
    }

    @Test("play --fx varispeed:rate=2 plays the song twice as fast: its envelope is the render's through the same")
    func playVarispeed() throws {
        try withTemporaryFolder("play") { directory in
            let raw = directory + "/played.raw"
            var result = try runPianola([
                "play", demoSong, "-d", "file:FILE=\(raw),FORMAT=raw", "-s", bundledFontPath, "--fx",
                "varispeed:rate=2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            result = try runPianola([
                "render", "-q", demoSong, "-o", directory + "/rendered.wav", "-s", bundledFontPath, "--format", "f32",
                "--fx", "varispeed:rate=2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let played = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let rendered = try readFloatWAV(directory + "/rendered.wav")
            #expect(played.count >= 44_100 * 15 && rendered.count >= 44_100 * 15)
            let (correlation, levels) = envelopeMatch(played, rendered, frames: 44_100 * 15 / 2)
            #expect(correlation > 0.97, "the envelopes correlate \(correlation)")
            #expect(abs(levels - 1) < 0.05, "levels in the ratio \(levels)")
            // The song ends at 7.5 s: what is played after that is its release tail, not more song.
            let after = played.dropFirst(44_100 * 2 * 9).prefix(44_100 * 2).map { abs($0) }.max() ?? 0
            #expect(after < 0.05, "after the song's end the level is \(after)")
        }
    }

    @Test("play --record-audio writes what is heard: the samples `render` writes, from the first frame")
    func playRecordsAudio() throws {
        try withTemporaryFolder("play") { directory in
            // A device paced at 8 × real time (a FIFO drained at that rate), as a sound card paces it.
            let drain = PacedDrain(folder: directory, bytesPerSecond: 44_100 * 8 * 8)
            let played = try runPianola([
                "play", demoSong, "-d", drain.device, "-s", bundledFontPath, "--record-audio",
                directory + "/heard.flac",
                "--record-format", "s24",
            ])
            #expect(played.status == 0, "\(played.stderr)")
            #expect(played.stderr.contains("Recorded audio: "), "\(played.stderr)")
            #expect(!played.stderr.contains("frames lost"), "\(played.stderr)")
            let rendered = try runPianola([
                "render", "-q", demoSong, "-o", directory + "/rendered.flac", "-s", bundledFontPath, "--format", "s24",
            ])
            #expect(rendered.status == 0)
            let heard = try AudioFile.read(from: directory + "/heard.flac").samples
            let reference = try AudioFile.read(from: directory + "/rendered.flac").samples
            let music = 44_100 * 15 * 2
            #expect(heard.count >= music && reference.count >= music)
            let differing = zip(heard.prefix(music), reference.prefix(music)).filter { $0 != $1 }.count
            #expect(differing == 0, "\(differing) samples differ")
        }
    }

    @Test("bad device, bad period: one clear line and a non-zero exit")
    func badDevice() throws {
        var result = try runPianola(["play", demoSong, "-d", "nosuchdevice", "-s", bundledFontPath])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("pianola: audio device 'nosuchdevice': cannot open: No such file or directory"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        result = try runPianola(["play", demoSong, "--period", "10"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--period must be between 32 and 8192 frames"))
    }

    @Test("devices lists ALSA playback and capture devices, as text and JSON")
    func devices() throws {
        let result = try runPianola(["devices", "--json"])
        #expect(result.status == 0)
        let devices = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]])
        #expect(devices.contains { $0["name"] == "null" && $0["kind"] == "playback" })
        #expect(devices.contains { $0["name"] == "null" && $0["kind"] == "capture" })
        // No sequencer on this machine: the text says so (the VM tests list real MIDI sources).
        let text = try runPianola(["devices"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Playback devices (play/live --device):\n  null"))
        #expect(text.stdout.contains("Capture devices (record --device):\n  null"))
        #expect(
            text.stdout.contains("MIDI sources (live --connect):\n  none: ALSA sequencer: cannot open /dev/snd/seq"))
    }

    @Test("live on the null device plays in real time: --record-audio holds as long as the session ran, nothing lost")
    func liveOnNullKeepsTime() throws {
        // Unpaced, three seconds of a session wrote two minutes of audio, 9.6 million frames lost.
        try withTemporaryFolder("play") { directory in
            let take = directory + "/take.wav"
            let log = directory + "/live.err"
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pianolaBinaryDirectory() + "/pianola")
            process.arguments = [
                "live", "-d", "null", "-s", bundledFontPath, "--rtpmidi-connect", "127.0.0.1:9", "--record-audio", take,
            ]
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            let launched = Date()
            try process.run()
            func said() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            // Running (the device started, signals handled) once it says what it invites.
            let deadline = Date().addingTimeInterval(30)
            while !said().contains("MIDI input: inviting") && process.isRunning && Date() < deadline { usleep(20_000) }
            #expect(said().contains("MIDI input: inviting"), "\(said())")
            sleep(2)
            process.terminate()
            process.waitUntilExit()
            let ran = Date().timeIntervalSince(launched)
            #expect(process.terminationStatus == 0, "\(said())")
            #expect(!said().contains("lost"), "\(said())")
            let seconds = Double(try AudioFile.read(from: take).frameCount) / 44_100
            // At most the whole time the process ran; most of the two seconds after that line (less
            // what underruns cost, should a busy machine keep the thread from its periods).
            #expect(seconds > 1 && seconds <= ran + 0.1, "\(seconds) s recorded in a session of \(ran) s")
        }
    }

    @Test("live without an ALSA sequencer: one clear line, non-zero exit")
    func liveWithoutSequencer() throws {
        let result = try runPianola(["live", "-d", "null", "-s", bundledFontPath])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("pianola: ALSA sequencer: cannot open /dev/snd/seq: No such file or directory"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        let bad = try runPianola(["live", "--program", "17:3"])
        #expect(bad.status != 0 && bad.stderr.contains("--program must be CHANNEL:[BANK:]PROGRAM"))
        let badPeer = try runPianola(["live", "--rtpmidi-connect", "studio-mac"])
        #expect(badPeer.status != 0 && badPeer.stderr.contains("--rtpmidi-connect must be HOST:PORT"))
        let unknownPeer = try runPianola(
            ["live", "-d", "null", "-s", bundledFontPath, "--rtpmidi-connect", "no-such-host.invalid:5004"])
        #expect(unknownPeer.status == 1)
        #expect(
            unknownPeer.stderr.hasPrefix("pianola: network MIDI: cannot open a session to 'no-such-host.invalid'"),
            "\(unknownPeer.stderr)")
    }
}

/// How alike two interleaved stereo signals' envelopes (levels of 2048-frame blocks over their
/// first `frames`) are: their correlation, and the ratio of their mean levels.
func envelopeMatch(_ first: [Float], _ second: [Float], frames: Int) -> (correlation: Double, levels: Double) {
    func envelope(_ samples: [Float]) -> [Double] {
        (0..<(frames / 2_048)).map { block in
            let slice = samples[min(samples.count, block * 4_096)..<min(samples.count, (block + 1) * 4_096)]
            return (slice.reduce(0.0) { $0 + Double($1 * $1) } / 4_096).squareRoot()
        }
    }
    let (a, b) = (envelope(first), envelope(second))
    let (meanA, meanB) = (a.reduce(0, +) / Double(a.count), b.reduce(0, +) / Double(b.count))
    let covariance = zip(a, b).reduce(0.0) { $0 + ($1.0 - meanA) * ($1.1 - meanB) }
    let spreadA = a.reduce(0.0) { $0 + ($1 - meanA) * ($1 - meanA) }.squareRoot()
    let spreadB = b.reduce(0.0) { $0 + ($1 - meanB) * ($1 - meanB) }.squareRoot()
    return (covariance / (spreadA * spreadB), meanA / meanB)
}
