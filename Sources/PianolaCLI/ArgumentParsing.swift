import ArgumentParser
import Pianola

/// Parsers for the options whose values have a shape: "auto" or seconds, m:ss, CH:PROG, HOST:PORT.
enum ArgumentParsing {
    /// `auto` or 0…600 seconds.
    static func tail(_ text: String) throws -> RenderOptions.Tail {
        guard let tail = RenderOptions.Tail(text) else {
            throw ValidationError("--tail must be auto or a number of seconds (0…600), got '\(text)'")
        }
        return tail
    }

    /// Seconds, or m:ss.
    static func time(_ text: String) throws -> Double {
        let parts = text.split(separator: ":")
        if parts.count == 2, let minutes = Double(parts[0]), let seconds = Double(parts[1]) {
            return minutes * 60 + seconds
        }
        guard parts.count == 1, let seconds = Double(text), seconds >= 0 else {
            throw ValidationError("--start must be seconds or m:ss, got '\(text)'")
        }
        return seconds
    }

    /// CHANNEL:[BANK:]PROGRAM, channel 1…16 (as musicians count), bank 0…16383 (128: drum kits),
    /// program 0…127.
    static func program(_ text: String) throws -> SamplerNode.ProgramOverride {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2 || parts.count == 3, let channel = parts[0], let program = parts[parts.count - 1],
            (1...16).contains(channel), (0...127).contains(program)
        else {
            throw ValidationError(
                "--program must be CHANNEL:[BANK:]PROGRAM with channel 1…16, bank 0…16383 and program 0…127, got '\(text)'"
            )
        }
        let bank = parts.count == 3 ? parts[1] : 0
        guard let bank, (0...16_383).contains(bank) else {
            throw ValidationError(
                "--program must be CHANNEL:[BANK:]PROGRAM with channel 1…16, bank 0…16383 and program 0…127, got '\(text)'"
            )
        }
        return SamplerNode.ProgramOverride(channel: UInt8(channel - 1), bank: UInt16(bank), program: UInt8(program))
    }

    /// A MIDI channel as musicians count, 1…16 (0-based in the result).
    static func channel(option: String) -> @Sendable (String) throws -> UInt8 {
        { text in
            guard let channel = UInt8(text), (1...16).contains(channel) else {
                throw ValidationError("\(option) must be a MIDI channel, 1…16, got '\(text)'")
            }
            return channel - 1
        }
    }

    /// [HOST:]PORT to listen on (every address by default).
    static func listenAddress(_ text: String) throws -> RTPMIDIAddress {
        guard let (host, port) = address(text) else {
            throw ValidationError("--rtpmidi must be PORT or ADDRESS:PORT with a port of 1…65534, got '\(text)'")
        }
        return RTPMIDIAddress(host: host ?? "0.0.0.0", port: port)
    }

    /// HOST:PORT of a peer (an IPv6 address in brackets is read, then refused when resolved).
    static func peerAddress(_ text: String) throws -> RTPMIDIAddress {
        guard let (host, port) = address(text), var host else {
            throw ValidationError("--rtpmidi-connect must be HOST:PORT with a port of 1…65534, got '\(text)'")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else {
            throw ValidationError("--rtpmidi-connect must be HOST:PORT with a port of 1…65534, got '\(text)'")
        }
        return RTPMIDIAddress(host: host, port: port)
    }

    /// An IP address or a CIDR range whose peers may join (`--rtpmidi-allow`); a session name
    /// is refused with the reason.
    static func allowedAddresses(_ text: String) throws -> RTPMIDIAddressRange {
        guard let range = RTPMIDIAddressRange(text) else {
            throw ValidationError(
                "--rtpmidi-allow must be an IP address or a CIDR range (192.168.1.20, 192.168.1.0/24, fd00::/8), got '\(text)': a session name is not access control, anyone can claim one"
            )
        }
        return range
    }

    /// [HOST:]PORT with a port of 1…65534 (the data port is the next one); HOST may not be empty.
    private static func address(_ text: String) -> (host: String?, port: Int)? {
        let colon = text.lastIndex(of: ":")
        let portText = colon.map { text[text.index(after: $0)...] } ?? text[...]
        let host = colon.map { String(text[..<$0]) }
        guard let port = Int(portText), (1...65_534).contains(port), host?.isEmpty != true else { return nil }
        return (host, port)
    }
}
