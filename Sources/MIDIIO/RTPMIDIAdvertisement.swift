import Foundation

/// Advertises a network MIDI session over mDNS / DNS-SD as `_apple-midi._udp`, the service macOS's
/// Audio MIDI Setup and iOS apps browse for, so the session shows up there by name.
///
/// It uses avahi, the mDNS responder of Linux desktops, through its `avahi-publish-service`
/// (Debian: avahi-utils), which keeps the service registered with the avahi daemon for as long as
/// it runs. Without avahi (the tool missing, or no daemon running) `start()` throws a typed error
/// and nothing else changes: the session still works for peers that know its address.
public final class RTPMIDIAdvertisement {
    /// The name asked for, and the UDP control port advertised.
    public let name: String
    /// The UDP control port advertised (the session's data port is the next one), as given to `init`.
    public let port: Int
    /// The name avahi registered (it renames on a collision: "Pianola #2"); nil until started.
    public private(set) var registeredName: String?

    private var process: Process?

    /// Makes an advertisement of the session `name` on the control `port`; nothing is registered
    /// until `start(timeout:)`.
    public init(name: String, port: Int) {
        self.name = name
        self.port = port
    }

    deinit { stop() }

    /// Registers the service; waits up to `timeout` for avahi's confirmation.
    public func start(timeout: Duration = .seconds(5)) throws(MIDIIOError) {
        guard process == nil else { return }
        guard let tool = Self.findTool("avahi-publish-service") else {
            throw .advertisementUnavailable(reason: "avahi-publish-service not found (Debian: avahi-utils)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [name, "_apple-midi._udp", String(port)]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw .advertisementUnavailable(reason: "\(tool): \(error.localizedDescription)")
        }
        // "Established under name 'NAME'" on standard output once the daemon has it.
        let lines = LineCollector()
        // (A handler that stays set at end of file is called again and again: it unsets itself.)
        let collect: @Sendable (FileHandle) -> Void = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil } else { lines.append(data) }
        }
        output.fileHandleForReading.readabilityHandler = collect
        errors.fileHandleForReading.readabilityHandler = collect
        let deadline = ContinuousClock.now + timeout
        var established: String?
        while ContinuousClock.now < deadline {
            established = lines.established
            if established != nil || !process.isRunning { break }
            usleep(20_000)
        }
        if established == nil {
            usleep(50_000)  // the last words of an exiting tool
            established = lines.established
        }
        guard let established, process.isRunning else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
            errors.fileHandleForReading.readabilityHandler = nil
            let said = lines.text.split(separator: "\n").last.map(String.init) ?? "no answer from the avahi daemon"
            throw .advertisementUnavailable(reason: said)
        }
        registeredName = established
        self.process = process
    }

    /// Withdraws the service.
    public func stop() {
        guard let process else { return }
        self.process = nil
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        for pipe in [process.standardOutput, process.standardError].compactMap({ $0 as? Pipe }) {
            pipe.fileHandleForReading.readabilityHandler = nil
        }
    }

    static func findTool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// What the tool prints, gathered from its pipes' handlers.
private final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) {
        lock.lock()
        data.append(chunk)
        lock.unlock()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// The name in "Established under name 'NAME'", once printed.
    var established: String? {
        let text = self.text
        guard let start = text.range(of: "Established under name '") else { return nil }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }
}
