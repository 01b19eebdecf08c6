import AudioFiles
import Foundation
import TestSupport
import Testing

/// MP3 decoders trim the encoder's delay and padding that LAME's header records, and Opus files
/// carry their pre-skip and end in the stream; measured, both come back to the frame. 64 frames
/// (1.5 ms) of tolerance still catches a decoder that kept LAME's delay (1 105 frames or more).
private let lengthTolerance = 64

private func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}

/// `pianola render` of the demo song with the bundled font to `output`, quietly, with `extra`.
private func renderDemo(to output: String, _ extra: [String] = []) throws -> (status: Int32, stderr: String) {
    let result = try runPianola(["render", "-q", demoSong, "-o", output, "-s", bundledFontPath] + extra)
    return (result.status, result.stderr)
}

@Suite("render, process and -o - write MP3 and Opus; process reads them", .serialized)
struct CompressedOutputTests {
    @Test(
        "a MIDI file renders to .mp3 (44.1 kHz) and .opus (48 kHz): libsndfile and mpg123/opusdec decode it as long and as loud as the WAV render"
    )
    func rendersMP3AndOpus() throws {
        try withTemporaryFolder("compressed-render") { folder in
            for name in ["demo.wav", "demo.mp3", "demo.opus"] {
                let result = try renderDemo(to: folder + "/" + name)
                #expect(result.status == 0, "\(name): \(result.stderr)")
            }
            let wav = try AudioFile.read(from: folder + "/demo.wav")
            let wavLevel = rmsDecibels(wav.samples)
            for (ext, rate) in [("mp3", 44_100), ("opus", 48_000)] {
                let path = folder + "/demo." + ext
                let expected = Int((Double(wav.frameCount) * Double(rate) / 44_100).rounded())
                let decoded = try AudioFile.read(from: path)
                #expect(decoded.channelCount == 2 && decoded.sampleRate == Double(rate), "\(ext)")
                #expect(abs(decoded.frameCount - expected) <= lengthTolerance, "\(ext): \(decoded.frameCount) frames")
                let level = rmsDecibels(decoded.samples)
                #expect(abs(level - wavLevel) < 0.5, "\(ext): RMS \(level) dBFS, WAV \(wavLevel)")
                #expect((decoded.samples.map(abs).max() ?? 0) > 0.05, "\(ext) is not silent")
                if ext == "mp3" {
                    let match = correlation(wav.samples, decoded.samples)
                    #expect(match > 0.98, "MP3 against WAV: correlation \(match)")
                }
                if let other = try decodeIndependently(path, in: folder) {
                    #expect(other.channelCount == 2 && other.sampleRate == rate, "\(ext)")
                    #expect(abs(other.samples.count / 2 - expected) <= lengthTolerance, "\(ext): other decoder")
                    #expect(abs(rmsDecibels(other.samples) - wavLevel) < 0.5, "\(ext): other decoder")
                } else {
                    print("skipped: mpg123 or opusdec is not installed (scripts/install-deps --test installs them)")
                }
                if let described = try fileDescription(path) {
                    let says = ext == "mp3" ? ["MPEG ADTS, layer III", "44.1 kHz"] : ["Opus audio", "stereo"]
                    #expect(says.allSatisfy { described.contains($0) }, "file says \(described)")
                    // A 44.1 kHz render in an Opus file notes that rate, as opusenc does.
                    if ext == "opus" { #expect(described.contains("44100 Hz (Input Sample Rate)"), "\(described)") }
                }
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(!names.contains { $0.contains("partial") }, "\(names)")
        }
    }

    @Test("--quality makes larger files step by step; --bitrate gives an MP3 of that many kbit/s, an Opus file near it")
    func qualityAndBitRate() throws {
        try withTemporaryFolder("compressed-size") { folder in
            let seconds = Double(try AudioFile.read(from: demoSongRender(folder)).frameCount) / 44_100
            for ext in ["mp3", "opus", "ogg"] {
                var sizes: [Int] = []
                for quality in ["0", "0.3", "0.6", "1"] {
                    let path = folder + "/q\(quality).\(ext)"
                    let result = try renderDemo(to: path, ["--quality", quality])
                    #expect(result.status == 0, "\(ext) \(quality): \(result.stderr)")
                    sizes.append(fileSize(path))
                }
                #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 < $1 }, "\(ext): sizes \(sizes)")
            }
            for (ext, kbps, tolerance) in [("mp3", 128, 0.03), ("opus", 64, 0.25)] {
                let path = folder + "/b\(kbps).\(ext)"
                let result = try renderDemo(to: path, ["--bitrate", "\(kbps)"])
                #expect(result.status == 0, "\(result.stderr)")
                let measured = Double(fileSize(path)) * 8 / seconds / 1_000
                #expect(abs(measured - Double(kbps)) / Double(kbps) < tolerance, "\(ext): \(measured) kbit/s")
            }
        }
    }

    /// Renders the demo song to `folder`/reference.wav (once) and returns its path.
    private func demoSongRender(_ folder: String) throws -> String {
        let path = folder + "/reference.wav"
        if !FileManager.default.fileExists(atPath: path) { _ = try renderDemo(to: path) }
        return path
    }

    @Test("-o - --ext mp3 and --ext opus write a whole file to standard output, decodable and as long as the WAV")
    func standardOutput() throws {
        try withTemporaryFolder("compressed-stdout") { folder in
            let wav = try AudioFile.read(from: demoSongRender(folder))
            for (ext, rate) in [("mp3", 44_100), ("opus", 48_000)] {
                let result = try runTool(
                    pianolaBinaryDirectory() + "/pianola",
                    ["render", "-q", demoSong, "-o", "-", "--ext", ext, "-s", bundledFontPath])
                #expect(result.status == 0, "\(result.stderr)")
                let path = folder + "/piped." + ext
                try result.stdout.write(to: URL(fileURLWithPath: path))
                let decoded = try AudioFile.read(from: path)
                let expected = Int((Double(wav.frameCount) * Double(rate) / 44_100).rounded())
                #expect(decoded.sampleRate == Double(rate) && decoded.channelCount == 2)
                #expect(abs(decoded.frameCount - expected) <= lengthTolerance, "\(ext): \(decoded.frameCount) frames")
                #expect(abs(rmsDecibels(decoded.samples) - rmsDecibels(wav.samples)) < 0.5)
                if let other = try decodeIndependently(path, in: folder) {
                    #expect(abs(other.samples.count / 2 - expected) <= lengthTolerance, "\(ext): other decoder")
                }
            }
        }
    }

    @Test("process reads .mp3 and .opus into WAV and FLAC, frame for frame; a WAV goes into Opus at 48 kHz")
    func processReadsAndWrites() throws {
        try withTemporaryFolder("compressed-process") { folder in
            #expect(try renderDemo(to: folder + "/demo.mp3").status == 0)
            #expect(try renderDemo(to: folder + "/demo.opus").status == 0)
            for (input, output) in [("demo.mp3", "from-mp3.wav"), ("demo.opus", "from-opus.flac")] {
                let result = try runPianola(["process", folder + "/" + input, "-o", folder + "/" + output])
                #expect(result.status == 0, "\(result.stderr)")
                let source = try AudioFile.read(from: folder + "/" + input)
                let processed = try AudioFile.read(from: folder + "/" + output)
                #expect(processed.sampleRate == source.sampleRate && processed.frameCount == source.frameCount)
                #expect(AudioFile.encoding(ofFileAt: folder + "/" + output) == .s16, "a lossy input gives s16")
                #expect(abs(rmsDecibels(processed.samples) - rmsDecibels(source.samples)) < 0.01)
            }
            let wav = try demoSongRender(folder)
            let result = try runPianola(["process", wav, "-o", folder + "/processed.opus", "--bitrate", "96"])
            #expect(result.status == 0, "\(result.stderr)")
            let opus = try AudioFile.read(from: folder + "/processed.opus")
            let source = try AudioFile.read(from: wav)
            #expect(opus.sampleRate == 48_000)
            let expected = Int((Double(source.frameCount) * 48_000 / 44_100).rounded())
            #expect(abs(opus.frameCount - expected) <= lengthTolerance)
            #expect(abs(rmsDecibels(opus.samples) - rmsDecibels(source.samples)) < 0.5)
        }
    }

    @Test("what MP3 and Opus cannot take is one clear line, exit 64, before anything renders; nothing is written")
    func refusedCombinations() throws {
        try withTemporaryFolder("compressed-errors") { folder in
            let render = ["render", demoSong, "-s", bundledFontPath]
            let cases: [([String], String)] = [
                (
                    render + ["-o", folder + "/x.mp3", "--format", "s24"],
                    "--format s24 does not apply to .mp3: MP3 holds compressed audio, not samples (set its size with --quality or --bitrate)"
                ),
                (render + ["-o", folder + "/x.opus", "--quality=-6"], "--quality must be between 0 and 1, got -6.0"),
                (
                    render + ["-o", folder + "/x.mp3", "--bitrate", "-6"],
                    "--bitrate must be a positive number of kbit/s"
                ),
                (
                    render + ["-o", folder + "/x.wav", "--quality", "0.5"],
                    "--quality applies to .mp3, .opus and .ogg output, not .wav"
                ),
                (
                    render + ["-o", folder + "/x.ogg", "--bitrate", "96"],
                    "--bitrate applies to .mp3 and .opus output, not .ogg (set an Ogg Vorbis file's size with --quality)"
                ),
                (
                    render + ["-o", folder + "/x.mp3", "--bitrate", "100"],
                    "--bitrate 100: an MP3 at 44100 Hz takes a bit rate of 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320 kbit/s, not 100"
                ),
                (
                    render + ["-o", folder + "/x.mp3", "--rate", "22050", "--bitrate", "320"],
                    "an MP3 at 22050 Hz takes a bit rate of 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160 kbit/s, not 320"
                ),
                (
                    render + ["-o", folder + "/x.mp3", "--quality", "0.5", "--bitrate", "96"],
                    "--quality and --bitrate both set the size: give one"
                ),
                (
                    render + ["-o", folder + "/x.mp3", "--channel-map", "10:3-4"],
                    "x.mp3: unsupported audio format: MP3 holds 1 or 2 channels, not 4"
                ),
                (
                    render + ["-o", "-", "--ext", "m4a"],
                    "--ext m4a cannot go to standard output: use wav, flac, ogg, opus, mp3, aiff or raw"
                ),
                (
                    ["process", demoSong, "-o", folder + "/x.opus", "--format", "s16"],
                    "--format s16 does not apply to .opus: Opus holds compressed audio"
                ),
            ]
            for (arguments, message) in cases {
                let result = try runPianola(arguments)
                #expect(result.status == 64, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains("SoundFont:"), "refused before the font is looked for")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test("--help names the formats and what --quality and --bitrate do")
    func help() throws {
        // Words, whatever the lines they are wrapped into.
        func help(_ command: String) throws -> String {
            try runPianola([command, "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let render = try help("render")
        for text in [".opus", ".mp3", "--quality", "--bitrate", "LAME's -V", "44.1 kHz into Opus at 48 kHz"] {
            #expect(render.contains(text), "render --help: \(text)")
        }
        let process = try help("process")
        #expect(process.contains("Opus, MP3") && process.contains("--bitrate"))
        let record = try help("record")
        #expect(record.contains(".opus, .mp3") && record.contains("--quality"))
    }
}
