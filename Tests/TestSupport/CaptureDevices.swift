import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A capture device made of ALSA's own plugins: the `file` plugin over `null`, whose `infile`
/// feeds the capture stream from a file (or a FIFO) of interleaved float samples.
public struct FileCaptureDevice {
    public let name = "pianola_test_capture"
    public let path: String

    public init(path: String) { self.path = path }

    /// The device's ALSA definition (for `AudioInputNode.Configuration.definitions`).
    public var definitions: String {
        "pcm.\(name) { type file slave.pcm null file \"/dev/null\" infile \"\(path)\" format raw }"
    }

    /// Writes `samples` (interleaved float) as the device's input.
    public static func make(samples: [Float], in folder: String) throws -> FileCaptureDevice {
        let path = folder + "/input.raw"
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        return FileCaptureDevice(path: path)
    }
}

/// Frames whose samples say where they came from: channel 0 holds the frame index modulo 2¹⁵ and
/// channel 1 the rest, both as multiples of 2⁻¹⁵ (exact in float files).
public func numberedFrames(_ count: Int, from first: Int = 0) -> [Float] {
    var samples = [Float](repeating: 0, count: count * 2)
    for frame in 0..<count {
        let index = first + frame
        samples[frame * 2] = Float(index % 32_768) / 32_768
        samples[frame * 2 + 1] = Float(index / 32_768) / 32_768
    }
    return samples
}

/// Feeds a FIFO with `samples` at `speed` × real time (in 4 KiB writes, so no frame is split),
/// from its own thread, so that the capture is paced as a device would pace it.
public final class PacedFeeder: @unchecked Sendable {
    public let path: String
    private var thread: Thread?

    public init(folder: String, samples: [Float], rate: Double, channels: Int, speed: Double) {
        path = folder + "/input.fifo"
        mkfifo(path, 0o644)
        // The reader (the capture device) closes the FIFO when the recording stops, which would
        // otherwise end this process with SIGPIPE at the next write.
        signal(SIGPIPE, SIG_IGN)
        let fifo = path
        thread = Thread {
            let descriptor = open(fifo, O_WRONLY)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            let chunkFrames = 4_096 / (4 * channels)
            let start = Date()
            var offset = 0
            while offset < samples.count {
                let count = min(chunkFrames * channels, samples.count - offset)
                let written = samples[offset..<offset + count].withUnsafeBytes {
                    write(descriptor, $0.baseAddress, $0.count)
                }
                if written <= 0 { return }
                offset += count
                let due = Double(offset / channels) / rate / speed
                let wait = due - Date().timeIntervalSince(start)
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
            }
        }
        thread?.start()
    }

    public var device: FileCaptureDevice { FileCaptureDevice(path: path) }
}

/// Drains a FIFO at `bytesPerSecond`, from its own thread: an ALSA `file` plugin writing into
/// it (`file:FILE=fifo,FORMAT=raw`) is then paced as a sound card paces its writer.
public final class PacedDrain: @unchecked Sendable {
    public let path: String
    private let stopping = StopFlag()

    private final class StopFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    public init(folder: String, bytesPerSecond: Double) {
        path = folder + "/output.fifo"
        mkfifo(path, 0o644)
        let fifo = path
        let stopping = stopping
        Thread {
            let descriptor = open(fifo, O_RDONLY)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let start = Date()
            var total = 0
            while !stopping.value.load(ordering: .relaxed) {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { return }
                total += count
                let wait = Double(total) / bytesPerSecond - Date().timeIntervalSince(start)
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
            }
        }.start()
    }

    /// The ALSA device name that writes into the FIFO.
    public var device: String { "file:FILE=\(path),FORMAT=raw" }

    deinit { stopping.value.store(true, ordering: .relaxed) }
}
