import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `pianola` (next to this test bundle) and returns its exit status and output.
func runPianola(
    _ arguments: [String], environment: [String: String] = [:]
) throws -> (status: Int32, stdout: String, stderr: String) {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = String(decoding: buffer[0..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // .../debug/PianolaPackageTests.xctest → .../debug/pianola
    let directory = String(exe[..<exe.lastIndex(of: "/")!])
    let binary = directory + "/pianola"
    let unique = "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    let outPath = "/tmp/pianola-cli-\(unique)-out", errPath = "/tmp/pianola-cli-\(unique)-err"
    let quoted = ([binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(
        separator: " ")
    let assignments = environment.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
    let status = system("env \(assignments) \(quoted) >\(outPath) 2>\(errPath) </dev/null")
    func slurp(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file); unlink(path) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    return ((status >> 8) & 0xFF, slurp(outPath), slurp(errPath))
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

@Suite("pianola command line", .serialized)
struct CLITests {
    @Test("--help teaches the SoundFont search order and lists subcommands")
    func help() throws {
        let result = try runPianola(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("PIANOLA_SOUNDFONT"))
        #expect(result.stdout.contains("soundfont"))
    }

    @Test("soundfont --json reports the font named by PIANOLA_SOUNDFONT")
    func soundfontJSON() throws {
        let fontPath = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let font = "/" + fontPath + "/SoundFonts/PianolaGM.sf2"
        let result = try runPianola(["soundfont", "--json"], environment: ["PIANOLA_SOUNDFONT": font])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"source\":\"environment\""))
        #expect(result.stdout.contains("PianolaGM.sf2"))
    }

    @Test("soundfont --presets lists 129 presets of the bundled font")
    func presets() throws {
        let fontPath =
            "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/SoundFonts/PianolaGM.sf2"
        let result = try runPianola(["soundfont", "--presets", "-s", fontPath])
        #expect(result.status == 0)
        #expect(
            result.stdout.split(separator: "\n").filter { $0.contains(":") && $0.first?.isNumber == true }.count == 129)
        #expect(result.stdout.contains("128:000  Standard Kit"))
    }

    @Test("a missing SoundFont is one clear line and exit status 1")
    func missingFont() throws {
        let result = try runPianola(["soundfont", "-s", "/no/such/font.sf2"])
        #expect(result.status == 1)
        #expect(result.stderr == "pianola: SoundFont not found: /no/such/font.sf2\n")
    }
}
