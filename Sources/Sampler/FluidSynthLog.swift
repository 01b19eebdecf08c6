import CFluidSynth
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Routes FluidSynth's process-global log into Pianola: warnings and errors are collected for the
/// caller (a SoundFont load reports the warnings it caused), info and debug chatter is dropped,
/// and nothing is printed to the terminal behind the user's back.
///
/// FluidSynth's log hook is global, so collection is serialized: `collecting(_:)` holds a lock for
/// the duration of the operation. It is meant for loading, never for the audio thread.
enum FluidSynthLog {
    private struct State {
        var installed = false
        var messages: [String] = []
        /// Messages of the threads collecting on their own (`collectingOnThisThread`), by thread.
        var threadMessages: [UInt: [String]] = [:]
    }
    private static let state = Mutex(State())
    private static let operationLock = Mutex(())
    /// Messages are kept only while an operation collects them, and only those logged by the
    /// collecting thread. FluidSynth also logs from the render thread (a missing preset, voices
    /// stolen); those are dropped there, without a lock or an allocation.
    private static let collectingThread = Atomic<UInt>(0)

    /// Runs `operation` while capturing the warnings and errors FluidSynth logs during it.
    static func collecting<T>(_ operation: () throws -> T) rethrows -> (T, [String]) {
        try operationLock.withLock { _ in
            installIfNeeded()
            state.withLock { $0.messages.removeAll() }
            // Only the loading thread's messages belong to the load: a render running at the
            // same time on another thread (logging a missing preset, say) must neither be
            // blamed on it nor made to allocate.
            collectingThread.store(UInt(pthread_self()), ordering: .releasing)
            defer { collectingThread.store(0, ordering: .releasing) }
            let result = try operation()
            let messages = state.withLock { state -> [String] in
                defer { state.messages.removeAll() }
                return state.messages
            }
            return (result, messages)
        }
    }

    /// Runs `operation` while capturing the warnings and errors FluidSynth logs on this thread
    /// during it, alongside other threads doing the same (no lock held while it runs): for the
    /// threads that read a font's samples at once.
    static func collectingOnThisThread<T>(_ operation: () throws -> T) rethrows -> (T, [String]) {
        installIfNeeded()
        pianola_fluidsynth_log_set_collecting(1)
        defer { pianola_fluidsynth_log_set_collecting(0) }
        let result = try operation()
        let thread = UInt(pthread_self())
        return (result, state.withLock { $0.threadMessages.removeValue(forKey: thread) ?? [] })
    }

    static func installIfNeeded() {
        let needsInstall = state.withLock { state -> Bool in
            defer { state.installed = true }
            return !state.installed
        }
        guard needsInstall else { return }
        let collect: fluid_log_function_t = { level, message, _ in
            let thread = UInt(pthread_self())
            let isCollecting = FluidSynthLog.collectingThread.load(ordering: .acquiring) == thread
            guard isCollecting || pianola_fluidsynth_log_is_collecting() != 0 else { return }
            guard let message else { return }
            let prefix = level == Int32(FLUID_WARN.rawValue) ? "warning" : "error"
            let text = "\(prefix): \(String(cString: message))"
            FluidSynthLog.state.withLock { state in
                if isCollecting {
                    state.messages.append(text)
                } else {
                    state.threadMessages[thread, default: []].append(text)
                }
            }
        }
        _ = fluid_set_log_function(Int32(FLUID_PANIC.rawValue), collect, nil)
        _ = fluid_set_log_function(Int32(FLUID_ERR.rawValue), collect, nil)
        _ = fluid_set_log_function(Int32(FLUID_WARN.rawValue), collect, nil)
        _ = fluid_set_log_function(Int32(FLUID_INFO.rawValue), nil, nil)
        _ = fluid_set_log_function(Int32(FLUID_DBG.rawValue), nil, nil)
        routeGLibLog()
    }

    /// A GLib log handler (`GLogFunc`).
    private typealias GLibLogFunction =
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
    /// `g_log_set_default_handler`.
    private typealias GLibSetDefaultHandler =
        @convention(c) (GLibLogFunction?, UnsafeMutableRawPointer?) -> GLibLogFunction?

    /// FluidSynth tries its DLS loader (libinstpatch) on a font its SoundFont loader refused, and
    /// libinstpatch reports through GLib, whose default handler prints "** CRITICAL **" lines on the
    /// terminal. GLib is FluidSynth's dependency, not Pianola's: found at run time, its messages are
    /// collected like FluidSynth's own (they belong to the load that caused them) or dropped.
    private static func routeGLibLog() {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "g_log_set_default_handler") else {
            return
        }
        let setDefaultHandler = unsafeBitCast(symbol, to: GLibSetDefaultHandler.self)
        let handler: GLibLogFunction = { domain, _, message, _ in
            guard FluidSynthLog.collectingThread.load(ordering: .acquiring) == UInt(pthread_self()) else { return }
            guard let message else { return }
            let source = domain.map { String(cString: $0) } ?? "GLib"
            let text = "warning: \(source): \(String(cString: message))"
            FluidSynthLog.state.withLock { $0.messages.append(text) }
        }
        _ = setDefaultHandler(handler, nil)
    }
}
