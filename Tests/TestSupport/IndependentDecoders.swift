import Foundation
import Synchronization

/// The path of a command-line tool in /usr/bin or /bin, or nil when it is not installed.
public func installedTool(_ name: String) -> String? {
    ["/usr/bin/", "/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs the program at `path` with `arguments`, no standard input, and `environment` (nil: this
/// process's); its exit status, standard output and standard error (both pipes read while it runs,
/// so that neither can fill and stall it).
public func runTool(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil
) throws -> (status: Int32, stdout: Data, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let errorData = Mutex(Data())
    let reader = Thread { errorData.withLock { $0 = errors.fileHandleForReading.readDataToEndOfFile() } }
    reader.start()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1_000) }
    return (process.terminationStatus, outputData, String(decoding: errorData.withLock { $0 }, as: UTF8.self))
}

/// A 16-bit PCM WAV file, as mpg123 and opusdec write them, parsed here chunk by chunk (not by
/// libsndfile): its channels, rate and interleaved samples (full scale ±1).
public func readPCM16WAV(_ path: String) throws -> (channelCount: Int, sampleRate: Int, samples: [Float]) {
    let wav = try Data(contentsOf: URL(fileURLWithPath: path))
    func integer(_ at: Int, _ bytes: Int) -> Int {
        (0..<bytes).reduce(0) { $0 | Int(wav[wav.startIndex + at + $1]) << (8 * $1) }
    }
    var channels = 0
    var rate = 0
    var offset = 12
    while offset + 8 <= wav.count {
        let id = String(decoding: wav[offset..<offset + 4], as: UTF8.self)
        let size = integer(offset + 4, 4)
        if id == "fmt " {
            guard integer(offset + 8, 2) == 1, integer(offset + 22, 2) == 16 else { break }
            channels = integer(offset + 10, 2)
            rate = integer(offset + 12, 4)
        } else if id == "data" {
            let end = min(wav.count, offset + 8 + size)
            let samples = wav[(offset + 8)..<end].withUnsafeBytes {
                $0.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32_768 }
            }
            return (channels, rate, samples)
        }
        offset += 8 + size + (size & 1)
    }
    throw CocoaError(.fileReadCorruptFile)
}

/// Decodes an .mp3 with mpg123 or an .opus with opusdec (at 48 kHz) into a WAV in `folder` and
/// reads it with `readPCM16WAV`: decoders other than libsndfile's own use of the codecs. Nil when
/// the tool is not installed (`scripts/install-deps --test` installs both).
public func decodeIndependently(
    _ path: String, in folder: String
) throws -> (channelCount: Int, sampleRate: Int, samples: [Float])? {
    let wav = folder + "/independent-\(UInt32.random(in: 0...UInt32.max)).wav"
    defer { unlink(wav) }
    let result: (status: Int32, stdout: Data, stderr: String)
    if path.lowercased().hasSuffix(".mp3") {
        guard let mpg123 = installedTool("mpg123") else { return nil }
        result = try runTool(mpg123, ["-q", "-w", wav, path])
    } else {
        guard let opusdec = installedTool("opusdec") else { return nil }
        result = try runTool(opusdec, ["--quiet", "--rate", "48000", path, wav])
    }
    guard result.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: ["stderr": result.stderr]) }
    return try readPCM16WAV(wav)
}

/// The correlation of two interleaved signals over their common length (1: the same up to a gain).
public func correlation(_ a: [Float], _ b: [Float]) -> Double {
    var dot = 0.0
    var energy = (0.0, 0.0)
    for index in 0..<min(a.count, b.count) {
        dot += Double(a[index]) * Double(b[index])
        energy.0 += Double(a[index]) * Double(a[index])
        energy.1 += Double(b[index]) * Double(b[index])
    }
    return dot / (energy.0 * energy.1).squareRoot()
}

/// The RMS level of samples in dBFS (−∞ for silence).
public func rmsDecibels(_ samples: [Float]) -> Double {
    let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
    return 10 * log10(energy)
}

/// What `file` says of `path` (its description, after the name), or nil without `file`.
public func fileDescription(_ path: String) throws -> String? {
    guard let file = installedTool("file") else { return nil }
    return String(decoding: try runTool(file, ["-b", path]).stdout, as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
