/// Finds attacks in a stream, one frame at a time, without allocating (render-thread safe): 5 ms
/// windows of the first difference of the signal (a high-pass that weights attacks) whose energy
/// is 10 dB above the mean of the 50 ms before and above −60 dBFS, at least 50 ms apart; each
/// onset placed a millisecond before the window's largest step. It is found when its window
/// ends, so it lies at most `lag` frames back.
struct OnsetDetector {
    /// Frames per window (5 ms).
    let window: Int
    /// How far before the window's largest step an onset is placed (1 ms).
    let lead: Int
    private let floor: Double
    /// The last ten windows' energies (a ring).
    private var history = SIMD16<Double>.zero
    private var windows = 0
    private var lastOnsetWindow = -100
    private var lastOnset = 0
    private var sum = 0.0
    private var largest = -1.0
    private var peak = 0
    private var previous = 0.0
    /// Frames seen.
    private(set) var frame = 0

    init(sampleRate: Double) {
        window = max(1, Int(0.005 * sampleRate))
        lead = Int(0.001 * sampleRate)
        floor = Double(window) * 1e-6
    }

    /// The most frames an onset lies before the frame that reveals it.
    var lag: Int { window + lead }

    /// Takes the next frame (the mean of its channels); returns an onset's frame when this frame
    /// ends a window that holds one.
    mutating func add(_ value: Double) -> Int? {
        let step = value - previous
        previous = value
        sum += step * step
        if abs(step) > largest { (largest, peak) = (abs(step), frame) }
        frame += 1
        guard frame % window == 0 else { return nil }
        let (energy, index) = (sum, windows)
        (sum, largest, windows) = (0, -1, windows + 1)
        defer { history[index % 10] = energy }
        guard index >= 1, index - lastOnsetWindow >= 10, energy > floor else { return nil }
        let count = min(index, 10)
        var total = 0.0
        // Oldest first, as the windows came.
        for back in stride(from: count, to: 0, by: -1) { total += history[(index - back) % 10] }
        guard energy > 10 * (total / Double(count)) else { return nil }
        let onset = max(1, peak - lead)
        guard onset > lastOnset else { return nil }
        (lastOnset, lastOnsetWindow) = (onset, index)
        return onset
    }
}
