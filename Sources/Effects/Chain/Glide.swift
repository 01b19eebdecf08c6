#if canImport(Glibc)
    import Glibc
#endif

/// A frequency moving geometrically towards `target` over `frames` frames, so that it covers the
/// whole way in `seconds` at most (a fraction frames / (seconds × rate) of the distance in
/// octaves, per call), settled on the target once within a millionth of it.
func glide(_ now: Double, to target: Double, frames: Int, sampleRate: Double, seconds: Double = 0.020) -> Double {
    guard now != target, now > 0 else { return target }
    let fraction = min(1, Double(frames) / (seconds * sampleRate))
    let next = now * pow(target / now, fraction)
    return abs(next - target) < 1e-6 * target ? target : next
}
