#if canImport(Glibc)
    import Glibc
#endif

/// An IP address, or a range of them in CIDR notation, whose peers may join a network MIDI
/// session (`RTPMIDISessionMachine.allow`, `--rtpmidi-allow`): `192.168.1.20`, `192.168.1.0/24`,
/// `fd00::/8`.
///
/// Who may join is decided by the address an invitation comes from, never by the session name a
/// peer gives: anyone can claim any name. IPv4 and IPv6 are read (an IPv4-mapped IPv6 address,
/// `::ffff:10.0.0.2`, is its IPv4 address); host bits set past the prefix are cleared
/// (`10.0.0.9/8` is `10.0.0.0/8`). A host name is not an address: `init(resolving:)` resolves one
/// first.
public struct RTPMIDIAddressRange: Hashable, Sendable, CustomStringConvertible {
    /// The network's address, 4 bytes (IPv4) or 16 (IPv6), its bits past `prefixLength` clear.
    let network: [UInt8]
    /// How many leading bits of an address must be the network's: all of them (32 or 128) for one
    /// address.
    let prefixLength: Int

    /// Reads `ADDRESS` or `ADDRESS/BITS` (0…32 for IPv4, 0…128 for IPv6); nil for anything else
    /// (a host name, a session name, a prefix too long).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard var bytes = Self.addressBytes(String(parts[0])) else { return nil }
        var length = bytes.count * 8
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), let bits = Int(parts[1]),
                (0...length).contains(bits)
            else { return nil }
            length = bits
        }
        // An IPv4-mapped IPv6 range whose prefix covers the mapping is an IPv4 range.
        if bytes.count == 16, bytes[0..<12] == Self.mappedPrefix[...], length >= 96 {
            bytes = Array(bytes[12...])
            length -= 96
        }
        for index in bytes.indices {
            let kept = min(8, max(0, length - index * 8))
            bytes[index] &= kept == 0 ? 0 : ~UInt8(0) << (8 - kept)
        }
        network = bytes
        prefixLength = length
    }

    /// The one IPv4 address `host` names: itself if it is one, else what it resolves to (a peer
    /// named by its host name, `studio-mac.local`). Throws `unknownHost` when it does not resolve.
    public init(resolving host: String) throws(MIDIIOError) {
        if let range = Self(host), range.prefixLength == range.network.count * 8 {
            self = range
            return
        }
        let address = try RTPMIDIListener.ipAddress(of: host)
        guard let range = Self(address) else { throw .unknownHost(host, reason: "no IPv4 address") }
        self = range
    }

    /// Whether `host`, an address as text (as the socket layer writes a peer's), is in the range.
    /// A host that is not an address is in none.
    public func contains(_ host: String) -> Bool {
        guard var bytes = Self.addressBytes(host) else { return false }
        if bytes.count == 16, bytes[0..<12] == Self.mappedPrefix[...] { bytes = Array(bytes[12...]) }
        guard bytes.count == network.count else { return false }
        for index in bytes.indices {
            let kept = min(8, max(0, prefixLength - index * 8))
            if kept == 0 { break }
            let mask = ~UInt8(0) << (8 - kept)
            if bytes[index] & mask != network[index] { return false }
        }
        return true
    }

    /// `192.168.1.20` for one address, `192.168.1.0/24` for a range (IPv6 as `inet_ntop` writes
    /// it: `fd00::/8`).
    public var description: String {
        let family = network.count == 4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = network.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        let address =
            written == nil
            ? "?" : String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefixLength == network.count * 8 ? address : "\(address)/\(prefixLength)"
    }

    /// The first 12 bytes of an IPv4-mapped IPv6 address (`::ffff:0:0/96`).
    static let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]

    /// The bytes of an IPv4 (4) or IPv6 (16) address written as text; nil if it is not one.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var four = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &four) == 1 { return four }
        var sixteen = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, text, &sixteen) == 1 { return sixteen }
        return nil
    }
}
