import FoundationEssentials
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

    /// The running `avahi-publish-service`, nil when not started.
    private var child: pid_t?

    /// Makes an advertisement of the session `name` on the control `port`; nothing is registered
    /// until `start(timeout:)`.
    public init(name: String, port: Int) {
        self.name = name
        self.port = port
    }

    deinit { stop() }

    /// Registers the service; waits up to `timeout` for avahi's confirmation.
    public func start(timeout: Duration = .seconds(5)) throws(MIDIIOError) {
        guard child == nil else { return }
        guard let tool = Self.findTool("avahi-publish-service") else {
            throw .advertisementUnavailable(reason: "avahi-publish-service not found (Debian: avahi-utils)")
        }
        // The tool's standard output and error both go to one pipe, read by a thread of its own
        // until the tool exits; its input is /dev/null.
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw .advertisementUnavailable(reason: "cannot make a pipe: \(POSIXReason(errno))")
        }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let words: [String] = [tool, name, "_apple-midi._udp", String(port)]
        let arguments = words.map { strdup($0) }
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (arguments + environment).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, tool, &actions, nil, arguments + [nil], environment + [nil])
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            throw .advertisementUnavailable(reason: "\(tool): \(POSIXReason(spawned))")
        }
        // "Established under name 'NAME'" on standard output once the daemon has it.
        let lines = LineCollector()
        do {
            try SystemThread.detach(stackSize: 1 << 16) {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        lines.append(buffer[0..<count])
                    } else if count == 0 || errno != EINTR {
                        break
                    }
                }
                close(readEnd)
            }
        } catch {
            close(readEnd)
            Self.end(pid, exited: false)
            throw .advertisementUnavailable(reason: "cannot start a thread to read \(tool): \(error)")
        }
        var exited = false
        let isRunning = {
            var status: Int32 = 0
            if !exited && waitpid(pid, &status, WNOHANG) == pid { exited = true }
            return !exited
        }
        let deadline = ContinuousClock.now + timeout
        var established: String?
        while ContinuousClock.now < deadline {
            established = lines.established
            if established != nil || !isRunning() { break }
            usleep(20_000)
        }
        if established == nil {
            usleep(50_000)  // the last words of an exiting tool
            established = lines.established
        }
        guard let established, isRunning() else {
            Self.end(pid, exited: exited)
            let said = lines.text.split(separator: "\n").last.map(String.init) ?? "no answer from the avahi daemon"
            throw .advertisementUnavailable(reason: said)
        }
        registeredName = established
        child = pid
    }

    /// Withdraws the service.
    public func stop() {
        guard let child else { return }
        self.child = nil
        Self.end(child, exited: false)
    }

    /// Stops the tool (it withdraws the service as it exits) and collects it.
    private static func end(_ pid: pid_t, exited: Bool) {
        guard !exited else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
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

/// What the tool prints, gathered by its reader thread.
private final class LineCollector: Sendable {
    private let data = Mutex<[UInt8]>([])

    func append(_ chunk: ArraySlice<UInt8>) {
        data.withLock { $0 += chunk }
    }

    var text: String {
        data.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// The name in "Established under name 'NAME'", once printed.
    var established: String? {
        let text = self.text
        guard let start = text.firstRange(of: "Established under name '") else { return nil }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }
}
