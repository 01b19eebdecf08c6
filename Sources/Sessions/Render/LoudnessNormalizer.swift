import AudioFiles
import AudioGraph
import Effects
import Meters

#if canImport(Glibc)
    import Glibc
#endif

/// Brings a file to an integrated loudness under a true-peak ceiling: measure (BS.1770 with
/// libebur128), scale, and where the scaled peaks would pass the ceiling, run the true-peak
/// limiter (`LimiterNode`, 4× oversampled detection, look-ahead compensated) and measure again,
/// correcting the gain until the loudness is within 0.1 LU of the target (at most eight passes
/// over the audio in memory; the synthesis is not repeated).
enum LoudnessNormalizer {
    struct Measured {
        var loudness: Double
        var truePeak: Double
        var peak: Float
        var samplesOverFullScale = 0
    }

    /// The limiter's ceiling sits this far under the requested one: its own margin and the
    /// rounding of the output format keep the measured true peak under the request.
    static let ceilingMargin = 0.3

    static func normalize(
        _ input: String, to output: String, target: LoudnessTarget, encoding: AudioFile.Encoding, dither: Bool = false,
        compression: AudioFile.Compression = .automatic
    ) throws(RenderError) -> Measured {
        let audio: AudioFile.Buffer
        do { audio = try AudioFile.read(from: input) } catch { throw .audio(error) }
        let frames = audio.frameCount
        let channels = audio.channelCount
        var left = [Float](repeating: 0, count: frames)
        var right = [Float](repeating: 0, count: frames)
        for frame in 0..<frames {
            left[frame] = audio.samples[frame * channels]
            right[frame] = audio.samples[frame * channels + min(1, channels - 1)]
        }
        let original = try measure(left, right, rate: audio.sampleRate)
        var gain = original.loudness.isFinite ? target.integrated - original.loudness : 0
        var resultLeft = left
        var resultRight = right
        // (gain, loudness) of the previous pass: with the limiter working, loudness grows more
        // slowly than the gain, so the next gain comes from the secant through the last two.
        var previous: (gain: Double, loudness: Double)?
        var best: (miss: Double, left: [Float], right: [Float]) = (.infinity, left, right)
        for _ in 0..<8 {
            let scale = Float(pow(10, gain / 20))
            resultLeft = left.map { $0 * scale }
            resultRight = right.map { $0 * scale }
            // Peaks over the ceiling after scaling: limit them.
            if original.truePeak + gain > target.truePeakCeiling - ceilingMargin {
                (resultLeft, resultRight) = try limited(
                    resultLeft, resultRight, rate: audio.sampleRate, ceiling: target.truePeakCeiling - ceilingMargin)
            }
            let now = try measure(resultLeft, resultRight, rate: audio.sampleRate)
            let miss = abs(now.loudness - target.integrated)
            if miss < best.miss { best = (miss, resultLeft, resultRight) }
            guard now.loudness.isFinite, miss > 0.1 else { break }
            // Limited so hard that more gain no longer makes it louder: keep the closest.
            if let previous, now.loudness < previous.loudness + 0.05, gain > previous.gain { break }
            var slope = 1.0
            if let previous, abs(now.loudness - previous.loudness) > 1e-3, gain != previous.gain {
                slope = min(max((now.loudness - previous.loudness) / (gain - previous.gain), 0.05), 1)
            }
            previous = (gain, now.loudness)
            gain += min((target.integrated - now.loudness) / slope, 24)
        }
        (resultLeft, resultRight) = (best.left, best.right)
        var interleaved = [Float](repeating: 0, count: frames * 2)
        var peak: Float = 0
        var overFullScale = 0
        for frame in 0..<frames {
            interleaved[2 * frame] = resultLeft[frame]
            interleaved[2 * frame + 1] = resultRight[frame]
            peak = max(peak, abs(resultLeft[frame]), abs(resultRight[frame]))
            if abs(resultLeft[frame]) > 1 { overFullScale += 1 }
            if abs(resultRight[frame]) > 1 { overFullScale += 1 }
        }
        do {
            try AudioFile.write(
                AudioFile.Buffer(samples: interleaved, channelCount: 2, sampleRate: audio.sampleRate), to: output,
                encoding: encoding, dither: dither, compression: compression)
        } catch { throw .audio(error) }
        // What was written (after the format's rounding).
        let written: AudioFile.Buffer
        do { written = try AudioFile.read(from: output) } catch { throw .audio(error) }
        let meter: LoudnessMeter
        do { meter = try LoudnessMeter(channelCount: written.channelCount, sampleRate: written.sampleRate) } catch {
            throw .meter(error)
        }
        written.samples.withUnsafeBufferPointer { meter.add(interleaved: $0) }
        return Measured(
            loudness: meter.integratedLoudness, truePeak: meter.truePeak, peak: peak,
            samplesOverFullScale: overFullScale)
    }

    /// How far under the ceiling a linear gain (`linearGain`) leaves the true peak: the output
    /// format's rounding and dither move it by less.
    static let linearCeilingMargin = 0.05

    /// The one gain, in dB, that brings audio measured at `loudness` (LUFS) and `truePeak` (dBTP)
    /// to `target` without a limiter, so that parts scaled by it still sum to the whole scaled by
    /// it: the target's loudness, or less where the true peak would pass the ceiling (then
    /// `capped`). 0 for silence.
    static func linearGain(
        loudness: Double, truePeak: Double, target: LoudnessTarget
    ) -> (gain: Double, capped: Bool) {
        guard loudness.isFinite else { return (0, false) }
        let gain = target.integrated - loudness
        let room = target.truePeakCeiling - linearCeilingMargin - truePeak
        return truePeak.isFinite && gain > room ? (room, true) : (gain, false)
    }

    /// Writes the audio file at `input` into `output`, every sample scaled by `gainDecibels`, in
    /// `encoding` (with `dither` for 16- and 24-bit; `compression` for the lossy formats),
    /// measuring what it writes (the loudness and true peak of a stereo file; every file's peak
    /// and samples over full scale).
    static func scale(
        _ input: String, to output: String, gainDecibels: Double, encoding: AudioFile.Encoding, dither: Bool,
        compression: AudioFile.Compression = .automatic
    ) throws(RenderError) -> Measured {
        var audio: AudioFile.Buffer
        do { audio = try AudioFile.read(from: input) } catch { throw .audio(error) }
        let scale = Float(pow(10, gainDecibels / 20))
        var peak: Float = 0
        var overFullScale = 0
        for index in audio.samples.indices {
            let sample = audio.samples[index] * scale
            audio.samples[index] = sample
            peak = max(peak, abs(sample))
            if abs(sample) > 1 { overFullScale += 1 }
        }
        let meter: LoudnessMeter?
        do {
            meter = audio.channelCount == 2 ? try LoudnessMeter(channelCount: 2, sampleRate: audio.sampleRate) : nil
        } catch { throw .meter(error) }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: output, sampleRate: audio.sampleRate, channelCount: audio.channelCount, encoding: encoding,
                expectedFrameCount: audio.frameCount, dither: dither, compression: compression)
        } catch { throw .audio(error) }
        let chunk = 65_536 * audio.channelCount
        var start = 0
        do {
            while start < audio.samples.count {
                let end = min(start + chunk, audio.samples.count)
                let part = Array(audio.samples[start..<end])
                part.withUnsafeBufferPointer { meter?.add(interleaved: $0) }
                try writer.write(interleaved: part)
                start = end
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw .audio(error)
        }
        return Measured(
            loudness: meter?.integratedLoudness ?? -.infinity, truePeak: meter?.truePeak ?? -.infinity, peak: peak,
            samplesOverFullScale: overFullScale)
    }

    private static func measure(_ left: [Float], _ right: [Float], rate: Double) throws(RenderError) -> Measured {
        let meter: LoudnessMeter
        do { meter = try LoudnessMeter(channelCount: 2, sampleRate: rate) } catch { throw .meter(error) }
        let chunk = 65_536
        var start = 0
        while start < left.count {
            let count = min(chunk, left.count - start)
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in
                    meter.add(left: l.baseAddress! + start, right: r.baseAddress! + start, frameCount: count)
                }
            }
            start += count
        }
        return Measured(loudness: meter.integratedLoudness, truePeak: meter.truePeak, peak: 0)
    }

    /// The signal through the true-peak limiter (5 ms look-ahead, 100 ms release), its delay
    /// taken off.
    private static func limited(
        _ left: [Float], _ right: [Float], rate: Double, ceiling: Double
    ) throws(RenderError) -> ([Float], [Float]) {
        let limiter = LimiterNode()
        limiter.truePeak = true
        limiter.ceiling = ceiling
        limiter.attack = 5
        limiter.release = 100
        let block = 4_096
        do { try limiter.prepare(format: .stereo(sampleRate: rate), maximumFrameCount: block) } catch {
            throw .graph("loudness normalization: the true-peak limiter cannot run at \(rate) Hz: \(error)")
        }
        let latency = limiter.latency
        let input = AudioBuffer(channelCount: 2, frameCapacity: block)
        let output = AudioBuffer(channelCount: 2, frameCapacity: block)
        var outLeft = [Float](repeating: 0, count: left.count)
        var outRight = [Float](repeating: 0, count: left.count)
        var position = 0
        var time: Int64 = 0
        while position < left.count + latency {
            let count = min(block, left.count + latency - position)
            for frame in 0..<count {
                let index = position + frame
                input.channel(0)[frame] = index < left.count ? left[index] : 0
                input.channel(1)[frame] = index < right.count ? right[index] : 0
            }
            limiter.process(
                input, into: output, frameCount: count, time: AudioTime(sampleTime: time, sampleRate: rate))
            for frame in 0..<count {
                let index = position + frame - latency
                guard index >= 0, index < left.count else { continue }
                outLeft[index] = output.channel(0)[frame]
                outRight[index] = output.channel(1)[frame]
            }
            position += count
            time += Int64(count)
        }
        return (outLeft, outRight)
    }
}
