import FoundationEssentials
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an output was rendered from: recorded when it is complete, compared on the next run.
struct BatchFingerprint: Equatable, Sendable {
    var inputSHA256: String
    /// The SoundFont's path, size and modification time (hashing a 150 MB bank on every run
    /// would cost more than many renders).
    var soundFont: String
    /// The settings that shape the render (`RenderOptions.fingerprint`).
    var options: String
}

/// The ledger of finished jobs: one JSON line per output, appended (with a single `write`) once
/// the output has its final name. A job whose output is recorded with the same fingerprint, and
/// still has the recorded size, is skipped; a half-written output is never recorded (renders go
/// to a temporary name first), and a line cut short by a crash is ignored. Several processes may
/// share one ledger (a cluster's workers on a shared folder): their lines do not interleave.
public final class BatchLedger: Sendable {
    /// The ledger's JSON Lines file (created by the first record).
    public let path: String
    private let records: Mutex<[String: (BatchFingerprint, Int)]>
    /// The outputs and inputs ("output:PATH", "input:PATH") named by lines a crash cut short: a
    /// job's own, though not done.
    private let named: Set<String>

    /// One line of the ledger.
    struct Entry: Codable {
        var output: String
        var input: String
        var inputSHA256: String
        var soundfont: String
        var options: String
        var bytes: Int
        var seconds: Double
        var finished: String
    }

    /// The ledger at `path`, with what it already records (none if it does not exist yet).
    public init(path: String) {
        self.path = path
        var loaded: [String: (BatchFingerprint, Int)] = [:]
        var named: Set<String> = []
        if let data = FileManager.default.contents(atPath: path) {
            let decoder = JSONDecoder()
            for line in data.split(separator: UInt8(ascii: "\n")) {
                // A line that does not decode was cut short by a crash: its output is not done,
                // but it is the batch's own when the line still names it.
                guard let entry = try? decoder.decode(Entry.self, from: Data(line)) else {
                    for key in ["output", "input"] {
                        if let value = Self.string(key, inCutLine: Array(line)) { named.insert(key + ":" + value) }
                    }
                    continue
                }
                let fingerprint = BatchFingerprint(
                    inputSHA256: entry.inputSHA256, soundFont: entry.soundfont, options: entry.options)
                loaded[entry.output] = (fingerprint, entry.bytes)
            }
        }
        records = Mutex(loaded)
        self.named = named
    }

    /// The string value of `key` in a ledger line cut short, if the cut came after it.
    private static func string(_ key: String, inCutLine line: [UInt8]) -> String? {
        let pattern = Array("\"\(key)\":\"".utf8)
        guard pattern.count <= line.count,
            let found = (0...(line.count - pattern.count)).first(where: {
                line[$0..<$0 + pattern.count].elementsEqual(pattern)
            })
        else { return nil }
        let open = found + pattern.count - 1
        var index = open + 1
        while index < line.count && line[index] != UInt8(ascii: "\"") {
            index += line[index] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard index < line.count else { return nil }
        return try? JSONDecoder().decode(String.self, from: Data(line[open...index]))
    }

    /// How many outputs are recorded.
    public var count: Int { records.withLock { $0.count } }

    /// Whether `output` is recorded as rendered from `fingerprint` and is still there, whole.
    func isDone(_ output: String, _ fingerprint: BatchFingerprint) -> Bool {
        guard let (recorded, bytes) = records.withLock({ $0[Self.key(output)] }), recorded == fingerprint
        else { return false }
        var info = stat()
        return stat(output, &info) == 0 && Int(info.st_size) == bytes
    }

    /// Whether the output of the job rendering `input` to `output` is one the ledger records, from
    /// whatever inputs and settings, or one a line cut short by a crash names (by the output or,
    /// when the cut came before it, by the input): the batch's own, which rendering it again may
    /// replace.
    func owns(output: String, input: String) -> Bool {
        let key = Self.key(output)
        return named.contains("output:" + key) || named.contains("input:" + input)
            || records.withLock { $0[key] != nil }
    }

    /// Records a finished output.
    func record(_ output: String, _ fingerprint: BatchFingerprint, input: String, seconds: Double) throws(BatchError) {
        var info = stat()
        guard stat(output, &info) == 0 else { throw .vanished(path: output) }
        let key = Self.key(output)
        let entry = Entry(
            output: key, input: input, inputSHA256: fingerprint.inputSHA256, soundfont: fingerprint.soundFont,
            options: fingerprint.options, bytes: Int(info.st_size), seconds: (seconds * 1_000).rounded() / 1_000,
            finished: Date.now.ISO8601Format())
        try JSONLines.append(entry, to: path)
        records.withLock { $0[key] = (fingerprint, Int(info.st_size)) }
    }

    /// Outputs are recorded by absolute path.
    static func key(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}

/// Where the jobs of a batch that fail are reported, one JSON line each: `{"input", "output",
/// "origin", "error"}`. A failed job is not in the ledger, so the next run tries it again.
public struct BatchFailureLog: Sendable {
    /// The log's JSON Lines file: created by the first failure, then appended to, run after run, until `clear()`.
    public let path: String

    /// A failure log at `path`; nothing is read or written until a job fails.
    public init(path: String) { self.path = path }

    struct Entry: Codable {
        var input: String
        var output: String
        var origin: String
        var error: String
    }

    func append(input: String, output: String, origin: String, error: String) throws(BatchError) {
        try JSONLines.append(Entry(input: input, output: output, origin: origin, error: error), to: path)
    }

    /// Starts the log afresh (this run's failures only).
    public func clear() { unlink(path) }
}

/// Appending to JSON Lines files.
enum JSONLines {
    /// Appends `value` as one line with one `write` on a descriptor opened for appending: lines
    /// from several processes do not interleave.
    static func append(_ value: some Encodable, to path: String) throws(BatchError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(value)) + [UInt8(ascii: "\n")] } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
        var before = stat()
        let existed = stat(path, &before) == 0
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(errno, path) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            let code = written < 0 ? errno : ENOSPC  // a short write: the disk filled up
            // Nothing of the line stays: a file this call created goes, a cut line is taken back.
            if existed { _ = ftruncate(descriptor, before.st_size) } else { unlink(path) }
            throw failure(code, path)
        }
    }

    /// The error for a failed open or write: a full disk (or spent quota) says so.
    private static func failure(_ code: Int32, _ path: String) -> BatchError {
        FileSystemSpace.isOutOfSpace(errno: code, folder: POSIXSupport.folder(of: path))
            ? .noSpace(path: path) : .cannotWrite(path: path, reason: String(cString: strerror(code)))
    }
}
