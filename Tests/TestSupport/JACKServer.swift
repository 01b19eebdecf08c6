import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private JACK server (`jackd -r -d dummy`, Debian's jackd2) under a name of its own, so that
/// tests never touch a server the machine runs; stopped when released. One at a time per test
/// process (`start` waits for the one before to be released): libjack serves one server per
/// process, and tests in several suites open clients. `startPipeWire` starts a private PipeWire
/// instead, which JACK clients reach through PipeWire's JACK library (as under `pw-jack`).
public final class JACKServer: @unchecked Sendable {
    private static let turn = DispatchSemaphore(value: 1)
    /// The server's name: give it to clients (`JACK_DEFAULT_SERVER`, or their server option).
    public let name: String
    /// The sample rate and period it runs at.
    public let sampleRate: Int
    public let periodFrames: Int
    /// What a client process's environment needs to reach this server (and no other).
    public let clientEnvironment: [String: String]
    /// Its physical playback ports' prefix (`system:playback_`, PipeWire's null sink's `sink:playback_`).
    public let playbackPrefix: String
    private let process: Process
    /// A folder the server owns (PipeWire's runtime and configuration), removed with it.
    private let folder: TemporaryFolder?

    private init(
        name: String, sampleRate: Int, periodFrames: Int, process: Process,
        clientEnvironment: [String: String], playbackPrefix: String = "system:playback_", folder: TemporaryFolder? = nil
    ) {
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.process = process
        self.clientEnvironment = clientEnvironment
        self.playbackPrefix = playbackPrefix
        self.folder = folder
    }

    /// Starts one with the dummy driver (paced by the clock, no sound card) and waits until it
    /// takes clients; the reason it cannot, otherwise (no jackd installed: `scripts/install-deps --test`).
    /// (1024 frames by default: the tests run beside many others on a loaded machine, and a
    /// longer period keeps the dummy driver's deadlines, and so the recordings, free of xruns.)
    public static func start(sampleRate: Int = 48_000, periodFrames: Int = 1_024) -> Result<JACKServer, SkipReason> {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else {
            return .failure(SkipReason(text: "no jackd (Debian jackd2; scripts/install-deps --test installs it)"))
        }
        turn.wait()
        let name = "pianola-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_AUDIO_RESERVATION"] = "1"
        return launch(
            "/usr/bin/jackd", ["-n", name, "-r", "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(periodFrames)"],
            environment: environment, readyPort: "system:playback_1"
        ) { process in
            JACKServer(
                name: name, sampleRate: sampleRate, periodFrames: periodFrames, process: process,
                clientEnvironment: ["JACK_DEFAULT_SERVER": name])
        }
    }

    /// Runs a server (`turn` taken) and waits up to 5 s for `readyPort` in its graph; the
    /// server, or why there is none (its turn given back).
    private static func launch(
        _ executable: String, _ arguments: [String], environment: [String: String], readyPort: String,
        server make: (Process) -> JACKServer
    ) -> Result<JACKServer, SkipReason> {
        let tool = (executable as NSString).lastPathComponent
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            turn.signal()
            return .failure(SkipReason(text: "\(tool) would not start: \(error)"))
        }
        // (Released, the server stops its process and gives the turn back.)
        let server = make(process)
        for _ in 0..<100 {
            if server.ports().contains(readyPort) { return .success(server) }
            usleep(50_000)
        }
        return .failure(SkipReason(text: "\(tool) started but took no JACK clients within 5 s"))
    }

    /// Starts a private PipeWire daemon (Debian's pipewire and pipewire-jack) with a dummy driver
    /// at `sampleRate` and a fixed quantum of `periodFrames`, and a null sink `sink` whose
    /// playback ports JACK clients see as physical; no session manager. Clients reach it
    /// through PipeWire's JACK library (`clientEnvironment` does what `pw-jack` does).
    public static func startPipeWire(
        sampleRate: Int = 48_000, periodFrames: Int = 1_024
    ) -> Result<JACKServer, SkipReason> {
        // PipeWire's JACK library, in the machine's multiarch folder (x86_64-linux-gnu, aarch64-linux-gnu…).
        let multiarch = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pipewire"),
            let library = multiarch.map({ "/usr/lib/\($0)/pipewire-0.3/jack" })
                .first(where: { FileManager.default.fileExists(atPath: $0 + "/libjack.so.0") })
        else {
            return .failure(
                SkipReason(text: "no PipeWire with its JACK library (scripts/install-deps --test installs them)"))
        }
        turn.wait()
        let name = "pianola-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let folder: TemporaryFolder
        do { folder = try TemporaryFolder("pipewire") } catch {
            turn.signal()
            return .failure(SkipReason(text: "\(error)"))
        }
        let configuration = folder.path + "/conf"
        do {
            try FileManager.default.createDirectory(
                atPath: folder.path + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
            try pipeWireDaemonConfiguration(name: name, sampleRate: sampleRate, quantum: periodFrames)
                .write(toFile: configuration + "/daemon.conf", atomically: true, encoding: .utf8)
            try pipeWireJACKConfiguration.write(toFile: configuration + "/jack.conf", atomically: true, encoding: .utf8)
        } catch {
            folder.remove()
            turn.signal()
            return .failure(SkipReason(text: "could not write PipeWire's configuration: \(error)"))
        }
        let environment = [
            "PIPEWIRE_RUNTIME_DIR": folder.path + "/run", "XDG_RUNTIME_DIR": folder.path + "/run",
            "PIPEWIRE_REMOTE": name,
            "PIPEWIRE_CONFIG_DIR": configuration, "JACK_NO_START_SERVER": "1",
            "LD_LIBRARY_PATH": library + (ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"].map { ":" + $0 } ?? "")
            ,
        ]
        return launch(
            "/usr/bin/pipewire", ["-c", configuration + "/daemon.conf"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
                .filter { !["PIPEWIRE_LATENCY", "PIPEWIRE_QUANTUM", "JACK_DEFAULT_SERVER"].contains($0.key) },
            readyPort: "sink:playback_FL"
        ) { process in
            JACKServer(
                name: name, sampleRate: sampleRate, periodFrames: periodFrames, process: process,
                clientEnvironment: environment, playbackPrefix: "sink:playback_", folder: folder)
        }
    }

    /// The daemon's whole configuration: the native protocol, JACK clients (client-node), links,
    /// a timer-paced driver and a null sink in the driver's group (else the sink, a driver too,
    /// would take over the clients linked to it).
    private static func pipeWireDaemonConfiguration(name: String, sampleRate: Int, quantum: Int) -> String {
        """
        context.properties = {
            core.daemon = true
            core.name = \(name)
            link.max-buffers = 16
            log.level = 1
            default.clock.rate = \(sampleRate)
            default.clock.allowed-rates = [ \(sampleRate) ]
            default.clock.quantum = \(quantum)
            default.clock.min-quantum = \(quantum)
            default.clock.max-quantum = \(quantum)
            default.clock.quantum-limit = 8192
            support.dbus = false
            mem.allow-mlock = false
        }
        context.spa-libs = {
            audio.convert.* = audioconvert/libspa-audioconvert
            support.* = support/libspa-support
        }
        context.modules = [
            { name = libpipewire-module-protocol-native }
            { name = libpipewire-module-metadata }
            { name = libpipewire-module-spa-node-factory }
            { name = libpipewire-module-client-node }
            { name = libpipewire-module-access }
            { name = libpipewire-module-adapter }
            { name = libpipewire-module-link-factory }
        ]
        context.objects = [
            { factory = metadata args = { metadata.name = default } }
            { factory = spa-node-factory
                args = { factory.name = support.node.driver node.name = Dummy-Driver
                         node.group = pipewire.dummy priority.driver = 20000 } }
            { factory = spa-node-factory
                args = { factory.name = support.node.driver node.name = Freewheel-Driver
                         priority.driver = 19000 node.group = pipewire.freewheel node.freewheel = true } }
            { factory = adapter
                args = {
                    factory.name = support.null-audio-sink
                    node.name = sink
                    node.description = sink
                    media.class = Audio/Sink
                    node.group = pipewire.dummy
                    audio.rate = \(sampleRate)
                    audio.channels = 2
                    audio.position = [ FL FR ]
                    adapter.auto-port-config = { mode = dsp monitor = true control = false position = preserve }
                }
            }
        ]
        """
    }

    /// The JACK library's side: the protocol and the client node, nothing from the machine's own files.
    private static let pipeWireJACKConfiguration = """
        context.properties = { log.level = 0 }
        context.spa-libs = { support.* = support/libspa-support }
        context.modules = [
            { name = libpipewire-module-protocol-native }
            { name = libpipewire-module-client-node }
            { name = libpipewire-module-metadata }
        ]
        jack.properties = { }
        """

    /// Runs a JACK client tool (one of jackd2's examples, such as `jack_midiseq`) against the
    /// server until the handle is released.
    public func client(_ tool: String, _ arguments: [String]) throws -> JACKClientProcess {
        try JACKClientProcess(tool, arguments, environment: clientEnvironment)
    }

    /// Starts one for a test, or throws why there is none (the test fails with the reason: on CI,
    /// `scripts/install-deps --test` installs jackd2).
    public static func started() throws -> JACKServer {
        try start().get()
    }

    /// Turns the server's freewheel mode on or off (`jack_freewheel`): it then runs its clients
    /// as fast as they go, unpaced, as a DAW exporting does; whether it took it.
    @discardableResult
    public func setFreewheel(_ on: Bool) -> Bool {
        run("/usr/bin/jack_freewheel", [on ? "y" : "n"]).status == 0
    }

    /// Changes the server's period while it runs (`jack_bufsize`); whether it took it.
    @discardableResult
    public func setPeriod(_ frames: Int) -> Bool {
        run("/usr/bin/jack_bufsize", [String(frames)]).status == 0
    }

    /// The ports of the server's graph (`jack_lsp`), by full name.
    public func ports() -> [String] {
        let (status, output) = run("/usr/bin/jack_lsp", serverArguments)
        return status == 0 ? output.split(separator: "\n").map(String.init) : []
    }

    /// `jack_lsp`'s server option: a jackd's name (PipeWire's is in the environment).
    private var serverArguments: [String] { folder == nil ? ["-s", name] : [] }

    /// The connections of `port` (`jack_lsp -c`).
    public func connections(of port: String) -> [String] {
        let (_, output) = run("/usr/bin/jack_lsp", serverArguments + ["-c", port])
        return output.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Records `ports` for `seconds` into a float WAV at `path` with jack_capture (Debian
    /// jack-capture); its exit status.
    @discardableResult
    public func capture(_ ports: [String], seconds: Double, to path: String) -> Int32 {
        var arguments = ["-dc", "-d", String(seconds), "-f", "wav"]
        for port in ports { arguments += ["-p", port] }
        return run("/usr/bin/jack_capture", arguments + [path], timeout: seconds + 20).status
    }

    /// Stops the server while clients run (SIGTERM: it tells them and exits; a SIGKILL would leave
    /// its shared memory behind and stop later servers on the machine from starting).
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            // jackd must end by itself (killed, it leaves its shared memory behind); PipeWire
            // gets 5 s, then is killed (it leaves only files in its own folder).
            if folder != nil {
                let deadline = Date().addingTimeInterval(5)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
            }
            process.waitUntilExit()
        }
        folder?.remove()
        removeClientSemaphores()
        Self.turn.signal()
    }

    /// jackd stopped while a client is connected (`kill()`) leaves that client's semaphore in
    /// /dev/shm (`jack_sem.UID_SERVER_CLIENT`); the name is this server's own, so it goes with it.
    private func removeClientSemaphores() {
        let prefix = "jack_sem.\(getuid())_\(name)_"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        where entry.hasPrefix(prefix) {
            unlink("/dev/shm/" + entry)
        }
    }

    /// Runs a JACK tool against the server: its exit status and output, or −1 when it has not
    /// ended within `timeout` seconds (it is killed: a wedged tool must not hang the tests).
    private func run(_ tool: String, _ arguments: [String], timeout: Double = 30) -> (status: Int32, output: String) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: tool)
        child.arguments = arguments
        child.environment = ProcessInfo.processInfo.environment.merging(clientEnvironment) { $1 }
        let outputPath = NSTemporaryDirectory() + "/pianola-jack-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { return (-1, "") }
        defer { unlink(outputPath) }
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        do { try child.run() } catch { return (-1, "") }
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning && Date() < deadline { usleep(10_000) }
        if child.isRunning {
            Glibc.kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            return (-1, "")
        }
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (child.terminationStatus, text)
    }
}

/// A JACK client tool running against a test's server; killed when released (jack_midiseq
/// ignores SIGTERM, and a client killed outright is dropped by the server).
public final class JACKClientProcess {
    private let process = Process()

    init(_ tool: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The samples of a float WAV's data chunk (interleaved), as jack_capture and `--format f32` write them.
public func readFloatWAVSamples(_ path: String) throws -> [Float] {
    let wav = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 12
    while offset + 8 <= wav.count {
        let id = String(decoding: wav[offset..<offset + 4], as: UTF8.self)
        let size = wav[(offset + 4)..<(offset + 8)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        if id == "data" {
            let end = min(wav.count, offset + 8 + size)
            return wav[(offset + 8)..<end].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }
        offset += 8 + size + (size & 1)
    }
    return []
}
