import AudioGraph
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AudioFiles

@Suite("AudioFilePlayerNode: scheduling, looping, sample-rate conversion, files")
struct AudioFilePlayerNodeTests {
    @Test("a clip scheduled at a sample time starts on that very sample, and the next follows without a gap")
    func sampleAccurateStart() throws {
        let player = AudioFilePlayerNode()
        try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        try player.schedule(rampClip(frames: 1_000), at: AudioTime(sampleTime: 1_234, sampleRate: 48_000))
        try player.schedule(rampClip(frames: 500, offset: 5_000))
        player.play()
        let output = try renderSource(player, frames: 3_000, prepare: false)
        #expect(output.left[..<1_234].allSatisfy { $0 == 0 })
        for frame in 0..<1_000 {
            #expect(output.left[1_234 + frame] == Float(frame + 1) / 100_000)
            #expect(output.right[1_234 + frame] == -Float(frame + 1) / 100_000)
        }
        for frame in 0..<500 { #expect(output.left[2_234 + frame] == Float(frame + 5_001) / 100_000) }
        #expect(output.left[2_734...].allSatisfy { $0 == 0 })
    }

    @Test("play(at:) starts the player on a sample; pause keeps the position; mono plays on both channels")
    func playAtPauseAndMono() throws {
        let player = AudioFilePlayerNode()
        let mono = try AudioClip(channels: [(0..<4_000).map { Float($0 + 1) / 100_000 }], sampleRate: 48_000)
        try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        try player.schedule(mono)
        player.play(at: AudioTime(sampleTime: 300, sampleRate: 48_000))
        var output = try renderSource(player, frames: 1_024, prepare: false)
        #expect(output.left[..<300].allSatisfy { $0 == 0 })
        #expect(output.left[300] == Float(1) / 100_000)
        #expect(output.left == output.right)
        player.pause()
        output = try renderSource(player, frames: 512, start: 1_024, prepare: false)
        #expect(output.left.allSatisfy { $0 == 0 }, "paused")
        player.play()
        output = try renderSource(player, frames: 256, start: 1_536, prepare: false)
        #expect(output.left[0] == Float(1_024 - 300 + 1) / 100_000, "resumes where it paused")
    }

    @Test(
        "a looping clip repeats seamlessly until a clip scheduled with .interruptsAtLoop takes over at the loop's end")
    func loopsAndInterruptsAtLoop() throws {
        let player = AudioFilePlayerNode()
        let finished = Atomic<Int>(0)
        try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        try player.schedule(rampClip(frames: 100), options: .loops) { finished.add(1, ordering: .relaxed) }
        player.play()
        var output = try renderSource(player, frames: 1_050, prepare: false)
        for frame in 0..<1_050 { #expect(output.left[frame] == Float(frame % 100 + 1) / 100_000) }
        // Scheduled behind a loop without an interrupt option: waits for ever.
        try player.schedule(rampClip(frames: 50, offset: 9_000))
        output = try renderSource(player, frames: 300, start: 1_050, prepare: false)
        for frame in 0..<300 { #expect(output.left[frame] == Float((1_050 + frame) % 100 + 1) / 100_000) }
        // At the end of the current pass (frame 1 400), the interrupting clip plays.
        try player.schedule(rampClip(frames: 60, offset: 7_000), options: .interruptsAtLoop)
        output = try renderSource(player, frames: 200, start: 1_350, prepare: false)
        #expect(output.left[49] == Float(100) / 100_000)
        // The waiting clip and the interrupting one are behind the loop; the waiting one plays first.
        #expect(output.left[50] == Float(9_001) / 100_000)
        #expect(output.left[100] == Float(7_001) / 100_000)
        #expect(output.left[160...].allSatisfy { $0 == 0 })
        #expect(eventually { finished.load(ordering: .relaxed) == 1 }, "the loop's completion ran")
        #expect(eventually { player.scheduledClipCount == 0 })
    }

    @Test(".interrupts cuts the playing clip at the next quantum; stop() drops the rest and runs their completions")
    func interruptsAndStop() throws {
        let player = AudioFilePlayerNode()
        let completions = Mutex<[String]>([])
        try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        try player.schedule(rampClip(frames: 10_000)) { completions.withLock { $0.append("long") } }
        player.play()
        _ = try renderSource(player, frames: 512, prepare: false)
        try player.schedule(rampClip(frames: 1_000, offset: 20_000), options: .interrupts) {
            completions.withLock { $0.append("interrupter") }
        }
        var output = try renderSource(player, frames: 256, start: 512, prepare: false)
        #expect(output.left[0] == Float(20_001) / 100_000)
        try player.schedule(rampClip(frames: 1_000)) { completions.withLock { $0.append("queued") } }
        player.stop()
        #expect(!player.isPlaying)
        #expect(eventually { completions.withLock { $0.count } == 3 })
        #expect(completions.withLock { $0 } == ["long", "interrupter", "queued"])
        player.play()
        output = try renderSource(player, frames: 256, start: 768, prepare: false)
        #expect(output.left.allSatisfy { $0 == 0 }, "nothing left after stop()")
        try player.schedule(rampClip(frames: 100))
        output = try renderSource(player, frames: 256, start: 1_024, prepare: false)
        #expect(output.left[0] == Float(1) / 100_000, "a clip scheduled after stop() plays")
    }

    @Test("volume scales the output and ramps over one quantum (no step)")
    func volume() throws {
        let player = AudioFilePlayerNode()
        let ones = try AudioClip(channels: [[Float](repeating: 1, count: 10_000)], sampleRate: 48_000)
        try player.schedule(ones)
        player.play()
        try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        var output = try renderSource(player, frames: 256, prepare: false)
        #expect(output.left.allSatisfy { $0 == 1 })
        player.volume = 0.5
        output = try renderSource(player, frames: 512, start: 256, prepare: false)
        let steps = zip(output.left.dropFirst(), output.left).map { abs($0 - $1) }
        #expect(steps.max()! < 0.01, "ramped")
        #expect(output.left[255] == 0.5)
        #expect(output.left[256...].allSatisfy { $0 == 0.5 })
    }

    @Test(
        "a 44.1 kHz clip plays at 48 kHz through libsamplerate: same pitch and duration, conversion noise below −90 dB",
        arguments: [AudioClip.ConversionQuality.medium, .best])
    func sampleRateConversion(quality: AudioClip.ConversionQuality) throws {
        let frames = 44_100
        let sine = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 44_100)) }
        let clip = try AudioClip(channels: [sine], sampleRate: 44_100)
        let player = AudioFilePlayerNode()
        player.conversionQuality = quality
        try player.schedule(clip)  // before the rate is known: converted in prepare
        player.play()
        let output = try renderSource(player, frames: 50_000)
        // Same duration: 48 000 frames of sound, then silence.
        #expect(output.left[47_990..<48_000].map { abs($0) }.max()! > 0.1)
        #expect(output.left[48_010...].allSatisfy { $0 == 0 })
        // Same pitch and phase: the ideal sine at 48 kHz, away from the edges.
        var error = 0.0
        var power = 0.0
        for frame in 2_000..<46_000 {
            let ideal = 0.5 * sin(2 * Double.pi * 1_000 * Double(frame) / 48_000)
            error += (Double(output.left[frame]) - ideal) * (Double(output.left[frame]) - ideal)
            power += ideal * ideal
        }
        let noise = 10 * log10(error / power)
        #expect(noise < -90, "\(quality): conversion error \(noise) dB")
        // The conversion is kept with the clip.
        #expect(
            try clip.converted(toSampleRate: 48_000, quality: quality)
                === clip.converted(toSampleRate: 48_000, quality: quality))
    }

    @Test(
        "files in WAV, FLAC, Ogg Vorbis, Opus, MP3 and AIFF load (async) and play",
        arguments: ["wav", "flac", "ogg", "opus", "mp3", "aiff"])
    func fileFormats(ext: String) async throws {
        let rate = 48_000
        var interleaved: [Float] = []
        for frame in 0..<rate {
            let value = Float(0.4 * sin(2 * Double.pi * 440 * Double(frame) / Double(rate)))
            interleaved += [value, value * 0.5]
        }
        try await withTemporaryFolder("audio-file-player") { folder in
            let path = folder + "/clip." + ext
            try AudioFile.write(
                AudioFile.Buffer(samples: interleaved, channelCount: 2, sampleRate: Double(rate)), to: path)
            let player = AudioFilePlayerNode()
            try player.prepare(format: .stereo(sampleRate: 48_000), maximumFrameCount: 512)
            let clip = try await player.scheduleFile(path)
            #expect(clip.channelCount == 2)
            // Vorbis comes back padded; Opus and MP3 files say their encoder delay and padding
            // (CompressedFileTests.lengthTolerance).
            #expect(abs(clip.frameCount - rate) <= (ext == "ogg" ? 2_048 : ext == "opus" || ext == "mp3" ? 64 : 0))
            player.play()
            let output = try renderSource(player, frames: 24_000, quantum: 512, prepare: false)
            var dot = 0.0
            var energy = (0.0, 0.0)
            for frame in 1_000..<24_000 {
                let expected = Double(interleaved[frame * 2 + 1])
                dot += Double(output.right[frame]) * expected
                energy.0 += Double(output.right[frame]) * Double(output.right[frame])
                energy.1 += expected * expected
            }
            let correlation = dot / (energy.0 * energy.1).squareRoot()
            #expect(correlation > 0.99, "\(ext): correlation \(correlation)")
        }
    }

    @Test("bad input is a typed error naming the file: missing, not audio, too many channels, frames outside the clip")
    func errors() async throws {
        try await withTemporaryFolder("audio-file-player") { directory in
            await #expect(throws: AudioFileError.self) { try await AudioClip(contentsOf: directory + "/missing.wav") }
            let text = directory + "/notes.wav"
            try "not audio".write(toFile: text, atomically: false, encoding: .utf8)
            do {
                _ = try await AudioClip(contentsOf: text)
                Issue.record("a text file loaded as audio")
            } catch {
                #expect("\(error)".hasPrefix(text))
            }
            let surround = directory + "/six.wav"
            try AudioFile.write(
                AudioFile.Buffer(samples: [Float](repeating: 0, count: 600), channelCount: 6, sampleRate: 48_000),
                to: surround)
            do {
                _ = try await AudioClip(contentsOf: surround)
                Issue.record("a 6-channel file loaded")
            } catch {
                #expect("\(error)".contains("6 channels"))
            }
            let player = AudioFilePlayerNode()
            #expect(throws: AudioFileError.self) { try player.schedule(rampClip(frames: 100), frames: 50..<200) }
        }
    }
}
