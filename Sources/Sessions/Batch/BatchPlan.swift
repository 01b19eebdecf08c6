import FoundationEssentials
import MIDICore

#if canImport(Glibc)
    import Glibc
#endif

/// The jobs of a batch, and the manifest lines that could not become jobs (each fails alone; the
/// batch goes on).
public struct BatchPlan: Sendable {
    /// The jobs, in the order given (a `BatchRunner` may take them longest first).
    public var jobs: [BatchJob]
    /// The manifest lines that could not become jobs; each counts as a failed job when the batch runs.
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
            jobs.append(job)
        }
        self.init(jobs: jobs, problems: problems)
    }

    /// The MIDI files under `folder` (recursively, sorted), each rendered to the same relative
    /// path under `output` with the extension `fileExtension`.
    public init(midiFilesUnder folder: String, intoFolder output: String, fileExtension: String) {
        let root = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let outputRoot = output.hasSuffix("/") ? String(output.dropLast()) : output
        var relatives: [String] = []
        for next in (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []
        where Self.midiExtensions.contains(POSIXSupport.pathExtension(of: next).lowercased()) {
            relatives.append(next)
        }
        var names = UniqueNames()
        let jobs = relatives.sorted().map { relative in
            // song.mid and song.kar side by side would both become song.EXT: the second gets a suffix.
            let stem = POSIXSupport.deletingPathExtension(relative)
            let output = outputRoot + "/" + names.claim(stem, fileExtension: fileExtension)
            return BatchJob(input: root + "/" + relative, output: output, origin: relative)
        }
        self.init(jobs: jobs)
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

/// A manifest line that could not become a job, and why.
public struct BatchProblem: Sendable, Hashable {
    /// The manifest's path and the line's number ("corpus.jsonl:12").
    public var origin: String
    /// The line's input path (resolved), or empty when it had none.
    public var input: String
    /// The line's output path (resolved), or empty when it had none.
    public var output: String
    /// Why the line is not a job: not a JSON object, a missing or unknown key, a value of the wrong type, an
    /// unknown format or tail, or an output that an earlier line already has.
    public var reason: String
}
