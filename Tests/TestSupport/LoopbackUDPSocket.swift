#if canImport(Glibc)
    import Glibc
#endif

/// A UDP socket on 127.0.0.1, for tests that play a network peer by hand: any bytes, from the
/// port of one's choosing (a peer's control or data port, or a third party's).
public final class LoopbackUDPSocket {
    /// Why a socket could not be opened.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with the system's reason.
        public var description: String
    }

    /// The port it is bound to.
    public let port: Int
    private let descriptor: Int32

    /// A socket bound to 127.0.0.1:`port` (0: any free port).
    public init(port: Int = 0) throws(Failure) {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "bind 127.0.0.1:\(port): \(reason)")
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit { close(descriptor) }

    /// Two sockets on consecutive ports (a participant's control port and its data port, as
    /// Apple's peers have them).
    public static func pair() throws(Failure) -> (control: LoopbackUDPSocket, data: LoopbackUDPSocket) {
        for _ in 0..<50 {
            let control = try LoopbackUDPSocket()
            guard control.port < 65_535, let data = try? LoopbackUDPSocket(port: control.port + 1) else { continue }
            return (control, data)
        }
        throw Failure(description: "no two free consecutive ports on 127.0.0.1")
    }

    /// Sends `bytes` to 127.0.0.1:`port`.
    public func send(_ bytes: [UInt8], to port: Int) {
        var address = Self.loopback(port: port)
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        descriptor, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The next datagram that comes within `seconds`, or nil.
    public func receive(within seconds: Double) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count < 0 ? nil : Array(buffer.prefix(count))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return address
    }
}
