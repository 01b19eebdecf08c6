import AudioGraph
import Foundation
import Sampler
import SoundFontFiles
import TestSupport
import Testing
import VoiceComparison

@testable import VoiceEngine

/// A note that plays a looped sample: the first zone pair that uses it, at its root key.
struct LoopedNote: CustomStringConvertible {
    var sample: Int
    var sampleName: String
    var bank: Int
    var program: Int
    var key: Int
    var velocity: Int
    var description: String { "\(sampleName) (\(bank):\(program) key \(key))" }

    /// One note per looped sample of `bank`, in the order of its presets.
    static func all(in bank: SoundFontBank) -> [LoopedNote] {
        var notes: [LoopedNote] = []
        var seen = Set<Int>()
        for preset in bank.presets {
            for presetZone in preset.zones {
                guard let instrumentIndex = presetZone.target else { continue }
                let instrument = bank.instruments[instrumentIndex]
                for zone in instrument.zones {
                    guard let sample = zone.target, !seen.contains(sample) else { continue }
                    let mode = zone.generators[.sampleModes] ?? instrument.globalZone?.generators[.sampleModes] ?? 0
                    let header = bank.samples[sample]
                    guard mode == 1 || mode == 3, header.loopEnd - header.loopStart >= 32, !header.isROM else {
                        continue
                    }
                    let keys =
                        max(
                            zone.keyRange.lowerBound, presetZone.keyRange.lowerBound)...max(
                            min(zone.keyRange.upperBound, presetZone.keyRange.upperBound),
                            max(zone.keyRange.lowerBound, presetZone.keyRange.lowerBound))
                    let velocities =
                        max(
                            zone.velocityRange.lowerBound, presetZone.velocityRange.lowerBound)...max(
                            min(zone.velocityRange.upperBound, presetZone.velocityRange.upperBound),
                            max(zone.velocityRange.lowerBound, presetZone.velocityRange.lowerBound))
                    let root = Int(
                        zone.generators[.overridingRootKey] ?? instrument.globalZone?.generators[.overridingRootKey]
                            ?? -1)
                    let key = min(max(root >= 0 ? root : header.originalPitch, keys.lowerBound), keys.upperBound)
                    seen.insert(sample)
                    notes.append(
                        LoopedNote(
                            sample: sample, sampleName: header.name, bank: preset.bank, program: preset.program,
                            key: key, velocity: min(max(100, velocities.lowerBound), velocities.upperBound)))
                }
            }
        }
        return notes
    }
}

/// How a held note's difference from FluidSynth's render changes abruptly where it passes over
/// its loop seam, against anywhere else after the attack: the largest second difference of
/// (ours − FluidSynth's) within 4 frames of a pass (where the interpolation's taps straddle the
/// seam), and the largest elsewhere. A click of our own is an abrupt change of the difference;
/// the slow ones (an envelope step a block apart, vibrato) are not.
struct SeamComparison {
    var passes: Int
    var atSeams: Double
    var elsewhere: Double

    /// Whether no pass stands out: at most 1.5 times the largest change elsewhere, or below one
    /// 16-bit step (3e-5, −90 dBFS).
    var isClean: Bool { atSeams <= max(1.5 * elsewhere, 3e-5) }

    /// `note` held for `frames` (a 64-frame multiple), rendered by both engines; the native one
    /// one frame at a time, to see on which frame the voice's read position wraps.
    static func measure(
        _ note: LoopedNote, synthesizer: VoiceSynthesizer, sampler: SamplerNodeReference, frames: Int
    ) -> SeamComparison {
        let channel = note.bank == 128 ? 9 : 0
        let bankSelect = note.bank == 128 ? 0 : note.bank
        let theirs = fluidSynthNote(
            sampler: sampler.node, program: note.program, bank: bankSelect, channel: channel, key: note.key,
            velocity: note.velocity, holdFrames: frames, frames: frames)
        synthesizer.send(.reset, atFrame: 0)
        synthesizer.send(.controlChange(channel: channel, controller: 0, value: bankSelect), atFrame: 0)
        synthesizer.send(.programChange(channel: channel, program: note.program), atFrame: 0)
        synthesizer.send(.noteOn(channel: channel, key: note.key, velocity: note.velocity), atFrame: 0)
        var ours = [Float](repeating: 0, count: frames)
        var (right, reverb, chorus) = (Float(0), Float(0), Float(0))
        var wraps: [Int] = []
        var previous: Double?
        var slot: Int?
        for frame in 0..<frames {
            ours.withUnsafeMutableBufferPointer { left in
                synthesizer.render(
                    frameCount: 1, left: left.baseAddress! + frame, right: &right, reverb: &reverb, chorus: &chorus)
            }
            (right, reverb, chorus) = (0, 0, 0)
            // The first voice that plays the sample (a preset may layer it at two pitches), by its slot.
            let positions = synthesizer.playbackPositions()
            if slot == nil { slot = positions.firstIndex { $0.sample == note.sample } }
            let position = slot.flatMap { $0 < positions.count ? positions[$0].position : nil }
            if let position, let previous, position < previous { wraps.append(frame) }
            previous = position
        }
        // After the first 50 ms (the attack): the second difference of the difference.
        let difference = zip(ours, theirs.0).map { Double($0) - Double($1) }
        let from = 2_205
        let seams = wraps.filter { $0 - 8 >= from && $0 + 8 < frames }
        var atSeams = 0.0
        var elsewhere = 0.0
        var nearestPass = 0
        for frame in from..<(frames - 1) {
            let change = abs(difference[frame + 1] - 2 * difference[frame] + difference[frame - 1])
            while nearestPass + 1 < wraps.count && wraps[nearestPass + 1] <= frame { nearestPass += 1 }
            let nearPass =
                !wraps.isEmpty
                && (abs(wraps[nearestPass] - frame) <= 8
                    || (nearestPass + 1 < wraps.count && abs(wraps[nearestPass + 1] - frame) <= 8))
            if nearPass {
                if abs(wraps[nearestPass] - frame) <= 4
                    || (nearestPass + 1 < wraps.count && abs(wraps[nearestPass + 1] - frame) <= 4)
                {
                    atSeams = max(atSeams, change)
                }
            } else {
                elsewhere = max(elsewhere, change)
            }
        }
        return SeamComparison(passes: seams.count, atSeams: atSeams, elsewhere: elsewhere)
    }
}

/// The FluidSynth sampler, in a class so that a parameterised test can share one per font.
final class SamplerNodeReference: @unchecked Sendable {
    let node: SamplerNode
    init(font: String) throws { node = try fluidSynthSampler(font: font) }
}

@Suite("Native voice engine: loop seams against FluidSynth", .serialized)
struct LoopSeamTests {
    /// Fonts whose looped samples are checked, which of them (every `step`-th, at most `limit`) and
    /// how long each note is held: every second one of the bundled font's (short synthetic loops:
    /// 93 of 185), and the first 10 of Debian's FluidR3Mono SF3 (recorded samples, whose loops
    /// start late); `PIANOLA_SEAM_FONTS` (paths, colon-separated) checks every looped sample of
    /// the fonts named.
    static var fonts: [(path: String, step: Int, limit: Int, frames: Int)] {
        if let fonts = ProcessInfo.processInfo.environment["PIANOLA_SEAM_FONTS"] {
            return fonts.split(separator: ":").map { (String($0), 1, Int.max, 88_064) }
        }
        return [(bundledFont, 2, Int.max, 19_840)]
            + (FileManager.default.fileExists(atPath: sf3Font) ? [(sf3Font, 1, 10, 88_064)] : [])
    }

    @Test("around every pass over a loop seam, a held note differs from FluidSynth's no more than elsewhere")
    func seams() throws {
        for (font, step, limit, frames) in Self.fonts {
            let bank = try SoundFontBank(contentsOf: font)
            let all = LoopedNote.all(in: bank)
            let notes = Array(stride(from: 0, to: all.count, by: step).map { all[$0] }.prefix(limit))
            let synthesizer = VoiceSynthesizer()
            let presets = Set(notes.map { [$0.bank, $0.program] }).map { (bank: $0[0], program: $0[1]) }
            try synthesizer.load(bank, presets: presets)
            let sampler = try SamplerNodeReference(font: font)
            var checked = 0
            var worst = (ratio: 0.0, note: "")
            for note in notes {
                let comparison = SeamComparison.measure(
                    note, synthesizer: synthesizer, sampler: sampler, frames: frames)
                guard comparison.passes > 0 else { continue }
                checked += 1
                let ratio = comparison.atSeams / max(comparison.elsewhere, 1e-9)
                if ratio > worst.ratio { worst = (ratio, note.description) }
                #expect(
                    comparison.isClean,
                    "\(font): \(note): \(comparison.passes) passes; difference \(comparison.atSeams) at the seams, \(comparison.elsewhere) elsewhere"
                )
            }
            print(
                "loop seams, \(font): \(checked) of \(notes.count) looped samples pass their seam; "
                    + "worst ratio \(worst.ratio) (\(worst.note))")
            #expect(
                checked * 2 > notes.count, "\(font): only \(checked) of \(notes.count) looped samples reach their seam")
        }
    }
}
