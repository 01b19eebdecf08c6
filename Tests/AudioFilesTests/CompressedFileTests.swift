import AudioFiles
import AudioGraph
import CSndFile
import Foundation
import TestSupport
import Testing

/// Three seconds of stereo music: five decaying notes with overtones, each placed left or right.
private func notes(rate: Double, seconds: Double = 3) -> AudioFile.Buffer {
    let frames = Int(seconds * rate)
    var samples = [Float](repeating: 0, count: frames * 2)
    let played: [(start: Double, frequency: Double, right: Float)] = [
        (0, 220, 0.3), (0.5, 277.18, 0.7), (1, 329.63, 0.5), (1.5, 440, 0.2), (2, 554.37, 0.8),
    ]
    for note in played {
        for frame in min(frames, Int(note.start * rate))..<frames {
            let time = Double(frame) / rate - note.start
            let envelope = exp(-2 * time) * min(1, time * 200)
            var value = 0.0
            for harmonic in 1...4 {
                value += sin(2 * Double.pi * note.frequency * Double(harmonic) * time) / Double(harmonic * harmonic)
            }
            samples[2 * frame] += Float(0.15 * envelope * value) * (1 - note.right)
            samples[2 * frame + 1] += Float(0.15 * envelope * value) * note.right
        }
    }
    return AudioFile.Buffer(samples: samples, channelCount: 2, sampleRate: rate)
}

/// libsndfile's major format, subtype, rate and channels of a file.
private func formatOf(_ path: String) -> (major: Int32, subtype: Int32, rate: Int, channels: Int) {
    var info = SF_INFO()
    guard let file = sf_open(path, Int32(SFM_READ), &info) else { return (0, 0, 0, 0) }
    sf_close(file)
    return (
        info.format & Int32(SF_FORMAT_TYPEMASK), info.format & Int32(SF_FORMAT_SUBMASK), Int(info.samplerate),
        Int(info.channels)
    )
}

private func size(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}

@Suite("MP3 and Opus files: written by extension, read back by libsndfile and by their own decoders")
struct CompressedFileTests {
    /// Lengths: MP3 encoders put a delay before the music (LAME: 576 frames, the decoder 529 more)
    /// and pad the end to a whole frame of 1 152; LAME's header records both, and gapless decoders
    /// (mpg123, inside libsndfile too) take them off. Opus files record their pre-skip (312 frames
    /// at 48 kHz) and the end's padding in the stream. Measured: both come back to the frame; the
    /// tolerance of 64 frames (1.5 ms) would still catch a decoder that kept the delay (≥ 1 105).
    static let lengthTolerance = 64

    @Test(
        "44.1 and 48 kHz music into .mp3 and .opus: type, channels, rate, length and level agree, decoded by libsndfile, mpg123 or opusdec",
        arguments: [("mp3", 44_100.0), ("opus", 44_100.0), ("opus", 48_000.0)])
    func writesAndReadsBack(ext: String, rate: Double) throws {
        let source = notes(rate: rate)
        try withTemporaryFolder("compressed") { folder in
            let path = folder + "/notes." + ext
            try AudioFile.write(source, to: path)
            // 44.1 kHz goes into Opus at 48 kHz, the rate above it that Opus holds.
            let fileRate = ext == "opus" ? 48_000.0 : rate
            let expectedFrames = Int((Double(source.frameCount) * fileRate / rate).rounded())
            let format = formatOf(path)
            #expect(
                format.major == Int32(ext == "mp3" ? SF_FORMAT_MPEG : SF_FORMAT_OGG)
                    && format.subtype == Int32(ext == "mp3" ? SF_FORMAT_MPEG_LAYER_III : SF_FORMAT_OPUS))
            #expect(format.rate == Int(fileRate) && format.channels == 2)
            #expect(AudioFile.encoding(ofFileAt: path) == nil, "a lossy file has no sample format")
            #expect(try AudioFile.FileType(path: path).rawValue == ext)

            let decoded = try AudioFile.read(from: path)
            #expect(decoded.channelCount == 2 && decoded.sampleRate == fileRate)
            #expect(
                abs(decoded.frameCount - expectedFrames) <= Self.lengthTolerance,
                "\(ext): \(decoded.frameCount) frames, \(expectedFrames) expected")
            let level = (rmsDecibels(source.samples), rmsDecibels(decoded.samples))
            #expect(abs(level.0 - level.1) < 0.5, "\(ext): RMS \(level.1) dBFS, source \(level.0)")
            #expect(level.1 > -30, "not silent: \(level.1) dBFS")
            if fileRate == rate {
                // Same rate and gapless: sample against sample.
                let match = correlation(source.samples, decoded.samples)
                #expect(match > 0.99, "\(ext) at \(rate): correlation \(match)")
            }

            if let independent = try decodeIndependently(path, in: folder) {
                #expect(independent.channelCount == 2 && independent.sampleRate == Int(fileRate))
                let frames = independent.samples.count / 2
                #expect(
                    abs(frames - expectedFrames) <= Self.lengthTolerance,
                    "\(ext), other decoder: \(frames) frames, \(expectedFrames) expected")
                #expect(abs(rmsDecibels(independent.samples) - level.0) < 0.5)
                if fileRate == rate { #expect(correlation(source.samples, independent.samples) > 0.99) }
            } else {
                print("skipped: mpg123 or opusdec is not installed (scripts/install-deps --test installs them)")
            }
            if let described = try fileDescription(path) {
                #expect(
                    described.contains(ext == "mp3" ? "MPEG ADTS, layer III" : "Opus audio"), "file says \(described)")
                // Opus notes the rate it was converted from, as opusenc does.
                if ext == "opus" { #expect(described.contains("\(Int(rate)) Hz (Input Sample Rate)"), "\(described)") }
            }
        }
    }

    @Test("a higher quality makes a larger MP3, Opus and Ogg Vorbis file; a bit rate gives about that many kbit/s")
    func qualityAndBitRate() throws {
        let source = notes(rate: 48_000)
        let seconds = Double(source.frameCount) / source.sampleRate
        try withTemporaryFolder("compressed-size") { folder in
            for ext in ["mp3", "opus", "ogg"] {
                var sizes: [Int] = []
                for quality in [0, 0.4, 0.7, 1] {
                    let path = folder + "/q\(quality).\(ext)"
                    try AudioFile.write(source, to: path, compression: .quality(quality))
                    sizes.append(size(path))
                    // Still the music, at every quality.
                    let decoded = try AudioFile.read(from: path)
                    #expect(abs(rmsDecibels(decoded.samples) - rmsDecibels(source.samples)) < 1.5, "\(ext) \(quality)")
                }
                #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 < $1 }, "\(ext): sizes \(sizes)")
            }
            // MP3 at a constant rate: every frame that size, so the file is the bit rate times the
            // length (plus LAME's header frame and a frame of padding).
            for kbps in [96, 192] {
                let path = folder + "/cbr\(kbps).mp3"
                try AudioFile.write(source, to: path, compression: .bitRate(kbps))
                let measured = Double(size(path)) * 8 / seconds / 1_000
                #expect(abs(measured - Double(kbps)) / Double(kbps) < 0.03, "MP3 at \(kbps): \(measured) kbit/s")
            }
            // Opus varies its rate about the target.
            var opus: [Double] = []
            for kbps in [32, 64, 128] {
                let path = folder + "/target\(kbps).opus"
                try AudioFile.write(source, to: path, compression: .bitRate(kbps))
                opus.append(Double(size(path)) * 8 / seconds / 1_000)
                #expect(opus.last! < Double(kbps) * 1.25 && opus.last! > Double(kbps) * 0.5, "Opus \(kbps): \(opus)")
            }
            #expect(opus[0] < opus[1] && opus[1] < opus[2])
            // The default MP3 is LAME's -V 2: between its -V 6 (quality 0.4) and -V 0 (1).
            let automatic = folder + "/default.mp3"
            try AudioFile.write(source, to: automatic)
            #expect(size(automatic) > size(folder + "/q0.4.mp3") && size(automatic) < size(folder + "/q1.0.mp3"))
        }
    }

    @Test("what MP3, Opus and lossless files cannot hold is a typed error naming the file; nothing is left behind")
    func impossibleCombinations() throws {
        try withTemporaryFolder("compressed-errors") { folder in
            let stereo = AudioFile.Buffer(
                samples: [Float](repeating: 0.1, count: 2_000), channelCount: 2, sampleRate: 44_100)
            let three = AudioFile.Buffer(
                samples: [Float](repeating: 0.1, count: 3_000), channelCount: 3, sampleRate: 44_100)
            let cases: [(AudioFile.Buffer, String, AudioFile.Encoding, AudioFile.Compression, String)] = [
                (
                    stereo, "x.mp3", .s24, .automatic,
                    "MP3 holds compressed audio, not s24 samples (leave the encoding at s16, the default; AudioFile.Compression sets the size)"
                ),
                (
                    stereo, "x.opus", .f32, .automatic,
                    "Opus holds compressed audio, not f32 samples (leave the encoding at s16, the default; AudioFile.Compression sets the size)"
                ),
                (three, "x.mp3", .s16, .automatic, "MP3 holds 1 or 2 channels, not 3"),
                (stereo, "x.mp3", .s16, .quality(1.5), "a quality is from 0 to 1, not 1.5"),
                (stereo, "x.wav", .s16, .quality(0.5), "a quality applies to MP3, Opus and Ogg Vorbis files, not WAV"),
                (
                    stereo, "x.mp3", .s16, .bitRate(100),
                    "an MP3 at 44100 Hz takes a bit rate of 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320 kbit/s, not 100"
                ),
                (stereo, "x.ogg", .s16, .bitRate(64), "a bit rate applies to MP3 and Opus files, not Ogg Vorbis"),
                (
                    stereo, "x.opus", .s16, .bitRate(600),
                    "an Opus file of 2 channels takes 12…512 kbit/s (6…256 per channel), not 600"
                ),
            ]
            for (buffer, name, encoding, compression, reason) in cases {
                let path = folder + "/" + name
                #expect(throws: AudioFileError.unsupportedFormat(path: path, reason: reason)) {
                    try AudioFile.write(buffer, to: path, encoding: encoding, compression: compression)
                }
                #expect(throws: AudioFileError.unsupportedFormat(path: path, reason: reason)) {
                    try AudioFile.FileType(path: path).check(
                        path: path, sampleRate: buffer.sampleRate, channelCount: buffer.channelCount,
                        encoding: encoding, compression: compression)
                }
            }
            // A tap told to write Opus at a rate it cannot hold.
            var settings = AudioFileTap.Settings()
            settings.fileSampleRate = 44_100
            #expect(
                throws: AudioFileError.unsupportedFormat(
                    path: folder + "/take.opus", reason: "Opus holds 8000, 12000, 16000, 24000, 48000 Hz, not 44100")
            ) {
                try AudioFileTap(path: folder + "/take.opus", channelCount: 2, sampleRate: 44_100, settings: settings)
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty, "left behind: \(left)")
        }
    }

    @Test("the rate a file is written at: the audio's where the format holds it, else the next one up (or the highest)")
    func fileRates() throws {
        let opus = AudioFile.FileType.opus
        let mp3 = AudioFile.FileType.mp3
        #expect(opus.fileSampleRate(for: 44_100) == 48_000)
        #expect(opus.fileSampleRate(for: 22_050) == 24_000)
        #expect(opus.fileSampleRate(for: 11_025) == 12_000)
        #expect(opus.fileSampleRate(for: 8_000) == 8_000)
        #expect(opus.fileSampleRate(for: 96_000) == 48_000)
        #expect(mp3.fileSampleRate(for: 44_100) == 44_100)
        #expect(mp3.fileSampleRate(for: 10_000) == 11_025)
        #expect(mp3.fileSampleRate(for: 88_200) == 48_000)
        #expect(AudioFile.FileType.wav.fileSampleRate(for: 96_000) == 96_000)
        #expect(try AudioFile.FileType(path: "Song.MP3") == .mp3)
        #expect(try AudioFile.FileType(path: "dir.v2/take.Opus") == .opus)
        #expect(throws: AudioFileError.self) { try AudioFile.FileType(path: "dir.mp3/take") }
        // 96 kHz into an MP3: written at 48 kHz, the same length in seconds.
        try withTemporaryFolder("compressed-rate") { folder in
            let source = notes(rate: 96_000, seconds: 1)
            try AudioFile.write(source, to: folder + "/high.mp3")
            let decoded = try AudioFile.read(from: folder + "/high.mp3")
            #expect(decoded.sampleRate == 48_000)
            #expect(abs(decoded.frameCount - 48_000) <= Self.lengthTolerance)
            #expect(abs(rmsDecibels(decoded.samples) - rmsDecibels(source.samples)) < 0.5)
        }
    }

    @Test("a tap records MP3 and Opus as it goes: at 44.1 kHz the Opus file is 48 kHz, converted on the writer thread")
    func tapRecords() throws {
        try withTemporaryFolder("compressed-tap") { folder in
            let source = notes(rate: 44_100, seconds: 2)
            for (name, compression) in [("take.opus", AudioFile.Compression.automatic), ("take.mp3", .bitRate(128))] {
                var settings = AudioFileTap.Settings()
                settings.compression = compression
                let tap = try AudioFileTap(
                    path: folder + "/" + name, channelCount: 2, sampleRate: 44_100, settings: settings)
                #expect(tap.fileSampleRate == (name.hasSuffix("opus") ? 48_000 : 44_100))
                tap.record()
                let quantum = 512
                let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
                var done = 0
                while done < source.frameCount {
                    let count = min(quantum, source.frameCount - done)
                    for frame in 0..<count {
                        buffer.channel(0)[frame] = source.samples[2 * (done + frame)]
                        buffer.channel(1)[frame] = source.samples[2 * (done + frame) + 1]
                    }
                    // Slower than the writer empties the ring, so no frame is dropped.
                    tap.process(buffer, frameCount: count, time: AudioTime(sampleTime: Int64(done), sampleRate: 44_100))
                    done += count
                    if done % (quantum * 64) == 0 { usleep(20_000) }
                }
                try tap.finish()
                #expect(tap.droppedFrameCount == 0)
                let decoded = try AudioFile.read(from: folder + "/" + name)
                #expect(decoded.sampleRate == tap.fileSampleRate)
                let expected = Int((Double(source.frameCount) * tap.fileSampleRate / 44_100).rounded())
                #expect(abs(decoded.frameCount - expected) <= Self.lengthTolerance, "\(name): \(decoded.frameCount)")
                #expect(abs(rmsDecibels(decoded.samples) - rmsDecibels(source.samples)) < 0.5, "\(name)")
            }
        }
    }
}
