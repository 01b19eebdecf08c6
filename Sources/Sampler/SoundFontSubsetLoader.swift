import CFluidSynth
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// FluidSynth's SoundFont loader with Pianola's file access: it reads the files themselves, except
/// that a thread loading a font inside `SoundFontSubsetLoader.loading(_:path:_:)` reads that
/// font's `SoundFontSubset` in its place (under the real path, so FluidSynth's messages and its
/// sample cache name the real file). Every synthesizer gets one, ahead of FluidSynth's own.
///
/// Samples read later, when presets are pinned, come from the real file: the subset keeps the
/// real bytes up to its preset data, which FluidSynth does not read again.
enum SoundFontSubsetLoader {
    private struct Key: Hashable {
        var thread: UInt
        var path: String
    }
    private static let pending = Mutex([Key: SoundFontSubset]())

    /// Adds the loader to `synth` (before any font is loaded); the synth deletes it.
    static func install(in synth: OpaquePointer, settings: OpaquePointer) {
        guard let loader = new_fluid_defsfloader(settings) else { return }
        fluid_sfloader_set_callbacks(loader, open, read, seek, tell, close)
        fluid_synth_add_sfloader(synth, loader)
    }

    /// Runs `body` (which loads the font at `path` on this thread) with `subset` read in its place.
    static func loading<T>(_ subset: SoundFontSubset, path: String, _ body: () -> T) -> T {
        let key = Key(thread: UInt(pthread_self()), path: path)
        pending.withLock { $0[key] = subset }
        defer { _ = pending.withLock { $0.removeValue(forKey: key) } }
        return body()
    }

    /// An open file: the real one, and the subset read in its place, if any.
    private final class Handle {
        let file: UnsafeMutablePointer<FILE>
        let subset: SoundFontSubset?
        var position = 0

        init(file: UnsafeMutablePointer<FILE>, subset: SoundFontSubset?) {
            self.file = file
            self.subset = subset
        }

        /// Exactly `count` bytes, or false (as FluidSynth's own reader: reading none fails too).
        func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Bool {
            guard let subset else { return fread(buffer, count, 1, file) == 1 }
            guard count > 0, position + count <= subset.size else { return false }
            var done = 0
            // The real file's bytes up to the preset data, with the subset's RIFF size.
            if position < subset.preservedLength {
                let part = min(count, subset.preservedLength - position)
                guard fseeko(file, off_t(position), SEEK_SET) == 0, fread(buffer, 1, part, file) == part else {
                    return false
                }
                for index in 4..<8 where index >= position && index < position + part {
                    buffer.storeBytes(
                        of: UInt8(truncatingIfNeeded: subset.riffSize >> UInt32(8 * (index - 4))),
                        toByteOffset: index - position, as: UInt8.self)
                }
                done = part
            }
            if done < count {
                let start = position + done - subset.preservedLength
                subset.presetData.withUnsafeBytes { bytes in
                    (buffer + done).copyMemory(from: bytes.baseAddress! + start, byteCount: count - done)
                }
            }
            position += count
            return true
        }

        func seek(to offset: Int, from origin: Int32) -> Bool {
            guard let subset else { return fseeko(file, off_t(offset), origin) == 0 }
            let base = origin == SEEK_SET ? 0 : origin == SEEK_CUR ? position : subset.size
            guard base + offset >= 0, base + offset <= subset.size else { return false }
            position = base + offset
            return true
        }

        var offset: Int { subset == nil ? Int(ftello(file)) : position }
    }

    private static func handle(_ pointer: UnsafeMutableRawPointer?) -> Handle {
        Unmanaged<Handle>.fromOpaque(pointer!).takeUnretainedValue()
    }

    /// A regular file only, as FluidSynth's own `open` (a directory or a FIFO is refused).
    private static let open: fluid_sfloader_callback_open_t = { name in
        var info = stat()
        guard let name, stat(name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let file = fopen(name, "rb") else {
            return nil
        }
        let key = Key(thread: UInt(pthread_self()), path: String(cString: name))
        let subset = SoundFontSubsetLoader.pending.withLock { $0[key] }
        return Unmanaged.passRetained(Handle(file: file, subset: subset)).toOpaque()
    }

    private static let read: fluid_sfloader_callback_read_t = { buffer, count, pointer in
        guard let buffer else { return FLUID_FAILED }
        return SoundFontSubsetLoader.handle(pointer).read(into: buffer, count: Int(count)) ? FLUID_OK : FLUID_FAILED
    }

    private static let seek: fluid_sfloader_callback_seek_t = { pointer, offset, origin in
        SoundFontSubsetLoader.handle(pointer).seek(to: Int(offset), from: origin) ? FLUID_OK : FLUID_FAILED
    }

    private static let tell: fluid_sfloader_callback_tell_t = { pointer in
        let offset = SoundFontSubsetLoader.handle(pointer).offset
        return offset < 0 ? fluid_long_long_t(FLUID_FAILED) : fluid_long_long_t(offset)
    }

    private static let close: fluid_sfloader_callback_close_t = { pointer in
        guard let pointer else { return FLUID_FAILED }
        let handle = Unmanaged<Handle>.fromOpaque(pointer).takeRetainedValue()
        return fclose(handle.file) == 0 ? FLUID_OK : FLUID_FAILED
    }
}
