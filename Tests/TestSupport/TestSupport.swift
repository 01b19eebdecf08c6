// Helpers shared by the test targets.
#if canImport(Glibc)
    import Glibc
#endif

/// A new, empty directory under the system's temporary directory (`$TMPDIR`, else `/tmp`).
public func makeTemporaryDirectory(_ prefix: String = "pianola-test") -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

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
