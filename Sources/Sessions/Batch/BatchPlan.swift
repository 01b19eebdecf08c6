import FoundationEssentials
import MIDICore
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The jobs of a batch, and the manifest lines that could not become jobs (each fails alone; the
/// batch goes on).
public struct BatchPlan: Sendable {
    /// The jobs, in the order given (a `BatchRunner` may take them longest first).
    public var jobs: [BatchJob]
    /// The manifest lines (and folders) that could not become jobs; each counts as a failed job when the
    /// batch runs.
    public var problems: [BatchProblem]

    /// A plan of `jobs`, with `problems` to report as failures.
    public init(jobs: [BatchJob] = [], problems: [BatchProblem] = []) {
        self.jobs = jobs
        self.problems = problems
    }

    /// The extensions of MIDI files a folder's jobs are made of.
    public static let midiExtensions: Set<String> = ["mid", "midi", "kar", "rmi", "smf"]

    /// One job per non-empty line of a manifest (JSON Lines): `{"input": "a.mid", "output":
    /// "a.wav", "soundfont": "x.sf2", "rate": 48000, "format": "s24", "gain": -3, "tail": "auto",
    /// "loudness": -14, "truePeak": -1}`, all but input and output optional; relative paths are
    /// relative to the manifest's folder; lines starting with `#` are comments.
    public init(manifestAt path: String) throws(BatchError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableManifest(path: path, reason: String(cString: strerror(errno)))
        }
        let base = path.contains("/") ? POSIXSupport.folder(of: path) : ""
        func resolve(_ value: String) -> String {
            value.hasPrefix("/") || base.isEmpty ? value : base + "/" + value
        }
        var jobs: [BatchJob] = []
        var problems: [BatchProblem] = []
        var outputs: [String: Int] = [:]
        let decoder = JSONDecoder()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in lines.enumerated() {
            let line = POSIXSupport.trimmingBlanks(rawLine)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let origin = "\(path):\(index + 1)"
            let parsed: ManifestLine
            do { parsed = try decoder.decode(ManifestLine.self, from: Data(line.utf8)) } catch {
                let problem = error as? ManifestLine.Problem ?? ManifestLine.Problem(reason: "not a JSON object")
                problems.append(
                    BatchProblem(
                        origin: origin, input: problem.input.map(resolve) ?? "",
                        output: problem.output.map(resolve) ?? "", reason: problem.reason))
                continue
            }
            var job = BatchJob(input: resolve(parsed.input), output: resolve(parsed.output), origin: origin)
            if let kind = Self.otherKind(job.input) {
                problems.append(
                    BatchProblem(
                        origin: origin, input: job.input, output: job.output,
                        reason: "the input \(job.input) is \(kind), not a MIDI file"))
                continue
            }
            if let first = outputs[job.output] {
                problems.append(
                    BatchProblem(
                        origin: origin, input: job.input, output: job.output,
                        reason: "its output is line \(first)'s output too"))
                continue
            }
            outputs[job.output] = index + 1
            job.soundFont = parsed.soundFont.map(resolve)
            job.sampleRate = parsed.sampleRate
            job.encoding = parsed.encoding
            job.gainDecibels = parsed.gainDecibels
            job.tail = parsed.tail
            job.loudness = parsed.loudness
            job.truePeak = parsed.truePeak
            job.engine = parsed.engine
            jobs.append(job)
        }
        self.init(jobs: jobs, problems: problems)
    }

    /// The MIDI files under `folder` (recursively, sorted), each rendered to the same relative
    /// path under `output` with the extension `fileExtension`. A folder that cannot be listed (the
    /// folder itself or one under it: gone, not a folder, permission denied) is a problem with its
    /// path and the reason, failed when the batch runs: its files are not silently left out.
    /// Symbolic links are listed, not followed into folders.
    public init(midiFilesUnder folder: String, intoFolder output: String, fileExtension: String) {
        let root = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let outputRoot = output.hasSuffix("/") ? String(output.dropLast()) : output
        var relatives: [String] = []
        var problems: [BatchProblem] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let path = relative.isEmpty ? root : root + "/" + relative
            let names: [(name: String, isFolder: Bool?)]
            do throws(POSIXReason) { names = try Self.entries(of: path) } catch {
                problems.append(
                    BatchProblem(
                        origin: path, input: path, output: "", reason: "cannot list the folder: \(error.description)"))
                continue
            }
            for (name, isFolder) in names {
                let next = relative.isEmpty ? name : relative + "/" + name
                var folder = isFolder ?? false
                if isFolder == nil {
                    // The file system does not say what the entry is: asked (one gone since is no entry).
                    var info = stat()
                    if lstat(root + "/" + next, &info) == 0 {
                        folder = (info.st_mode & S_IFMT) == S_IFDIR
                    } else if errno != ENOENT {
                        let path = root + "/" + next
                        let reason = POSIXReason(errno).description
                        problems.append(
                            BatchProblem(origin: path, input: path, output: "", reason: "cannot examine it: \(reason)"))
                        continue
                    }
                }
                if folder {
                    pending.append(next)
                } else if Self.midiExtensions.contains(POSIXSupport.pathExtension(of: next).lowercased()) {
                    relatives.append(next)
                }
            }
        }
        var names = UniqueNames()
        let jobs = relatives.sorted().map { relative in
            // song.mid and song.kar side by side would both become song.EXT: the second gets a suffix.
            let stem = POSIXSupport.deletingPathExtension(relative)
            let output = outputRoot + "/" + names.claim(stem, fileExtension: fileExtension)
            return BatchJob(input: root + "/" + relative, output: output, origin: relative)
        }
        self.init(jobs: jobs, problems: problems.sorted { $0.origin < $1.origin })
    }

    /// The entries of the folder at `path` (not `.` and `..`), each with whether it is a folder
    /// (nil where the file system does not say; a symbolic link is not), or why it cannot be listed.
    static func entries(of path: String) throws(POSIXReason) -> [(name: String, isFolder: Bool?)] {
        guard let directory = opendir(path) else { throw POSIXReason(errno) }
        defer { closedir(directory) }
        var entries: [(name: String, isFolder: Bool?)] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw POSIXReason(errno) }
                return entries
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != "." && name != ".." else { continue }
            let type = Int(entry.pointee.d_type)
            entries.append((name, type == DT_UNKNOWN ? nil : type == DT_DIR))
        }
    }

    /// What the file at `path` is when it exists and is neither a regular file nor a pipe (which
    /// are read), for the message: "a directory", "a character device"; nil otherwise.
    static func otherKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return nil
        }
    }

    /// `inputs` rendered into `folder`, each named after its input (`NAME.EXT`, `NAME-2.EXT` for
    /// a name that comes again).
    public init(files inputs: [String], intoFolder folder: String, fileExtension: String) {
        let root = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        var names = UniqueNames()
        self.init(
            jobs: inputs.map { input in
                BatchJob(
                    input: input,
                    output: root + "/" + names.claim(Self.baseName(of: input), fileExtension: fileExtension))
            })
    }

    /// The file name without its folder and extension.
    public static func baseName(of path: String) -> String {
        var base = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        return base
    }

    /// Output names, each used once.
    private struct UniqueNames {
        var used: Set<String> = []

        mutating func claim(_ stem: String, fileExtension: String) -> String {
            var name = stem + "." + fileExtension
            var counter = 2
            while used.contains(name) {
                name = "\(stem)-\(counter).\(fileExtension)"
                counter += 1
            }
            used.insert(name)
            return name
        }
    }
}

/// A manifest line, or a folder, that could not become jobs, and why.
public struct BatchProblem: Sendable, Hashable {
    /// The manifest's path and the line's number ("corpus.jsonl:12"), or the folder's path.
    public var origin: String
    /// The line's input path (resolved), or empty when it had none.
    public var input: String
    /// The line's output path (resolved), or empty when it had none.
    public var output: String
    /// Why the line is not a job: not a JSON object, a missing or unknown key, a value of the wrong type, an
    /// unknown format or tail, an input that is a directory or a device, or an output that an earlier line
    /// already has; or why the folder cannot be listed.
    public var reason: String
}
