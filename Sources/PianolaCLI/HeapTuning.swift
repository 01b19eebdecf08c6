#if canImport(Glibc)
    import Glibc
#endif

/// glibc's `mallopt`, for commands whose allocation pattern its defaults serve badly. (malloc.h is
/// not in Swift's Glibc module: the function is found at run time, the options are its numbers.)
enum HeapTuning {
    /// `M_TRIM_THRESHOLD`: free memory at the top of the heap above this is returned to the system.
    static let trimThreshold: Int32 = -1
    /// `M_MMAP_THRESHOLD`: allocations from this size up get their own mapping.
    static let mmapThreshold: Int32 = -3
    /// `M_ARENA_MAX`: how many heaps threads share out.
    static let arenaMax: Int32 = -8

    /// Sets `option` to `value`; nothing where glibc is not the allocator.
    static func set(_ option: Int32, _ value: Int32) {
        #if canImport(Glibc)
            guard let symbol = dlsym(nil, "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            _ = mallopt(option, value)
        #endif
    }
}
