// Helpers shared by the test targets.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small, seeded random number generator (SplitMix64), so property tests are repeatable.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A held 440 Hz tone at −20 dBFS with a 20 ms burst 12 dB louder every 150 ms (each an attack
/// for the time-pitch unit to keep), `seconds` long, mono.
public func heldToneWithBursts(seconds: Double, sampleRate: Double) -> [Float] {
    let (period, burst) = (Int(0.15 * sampleRate), Int(0.02 * sampleRate))
    return (0..<Int(seconds * sampleRate)).map { n in
        Float((n % period < burst ? 0.4 : 0.1) * sin(2 * Double.pi * 440 * Double(n) / sampleRate))
    }
}

/// A one-track Standard MIDI File at 96 ticks per quarter note (120 BPM: a tick is 1/192 s)
/// holding `events` (delta times and messages, as bytes), then End of Track.
public func smallSong(_ events: [UInt8]) -> [UInt8] {
    let track = events + [0, 0xFF, 0x2F, 0]
    let length = (0..<4).map { UInt8(truncatingIfNeeded: track.count >> (24 - 8 * $0)) }
    return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96] + Array("MTrk".utf8) + length + track
}

/// `smallSong` of one middle C held for `ticks` (below 128).
public func oneNoteSong(ticks: UInt8 = 96) -> [UInt8] {
    smallSong([0, 0x90, 60, 100, ticks, 0x80, 60, 0])
}
