import Testing

@testable import MIDIIO

@Suite("RTP-MIDI allow list: addresses and CIDR ranges")
struct RTPMIDIAddressRangeTests {
    func range(_ text: String) throws -> RTPMIDIAddressRange { try #require(RTPMIDIAddressRange(text), "\(text)") }

    @Test("one IPv4 address matches itself only")
    func single() throws {
        let one = try range("192.168.1.20")
        #expect(one.contains("192.168.1.20"))
        #expect(!one.contains("192.168.1.21") && !one.contains("192.168.1.2") && !one.contains("10.0.0.1"))
        #expect(one.description == "192.168.1.20")
    }

    @Test("IPv4 ranges: the prefix's bits must match; host bits given are cleared")
    func ipv4Ranges() throws {
        let lan = try range("192.168.1.0/24")
        #expect(lan.contains("192.168.1.0") && lan.contains("192.168.1.255"))
        #expect(!lan.contains("192.168.2.1") && !lan.contains("192.169.1.1"))
        let odd = try range("10.0.0.9/13")
        #expect(odd.description == "10.0.0.0/13")
        #expect(odd.contains("10.7.255.255") && !odd.contains("10.8.0.0"))
        #expect(try range("0.0.0.0/0").contains("203.0.113.7"))
        #expect(try range("0.0.0.0/0").contains("::1") == false)  // another family
    }

    @Test("IPv6 addresses and ranges; an IPv4-mapped address is its IPv4 address")
    func ipv6() throws {
        let ula = try range("fd00::/8")
        #expect(ula.contains("fd12:3456::1") && !ula.contains("fe80::1") && !ula.contains("10.0.0.1"))
        #expect(ula.description == "fd00::/8")
        #expect(try range("::1").contains("::1") && !(try range("::1").contains("::2")))
        #expect(
            try range("2001:db8::/127").contains("2001:db8::1")
                && !(try range("2001:db8::/127").contains("2001:db8::2")))
        // (A socket that takes both families writes IPv4 peers this way.)
        #expect(try range("10.0.0.0/8").contains("::ffff:10.1.2.3"))
        #expect(try range("::ffff:10.0.0.0/104") == range("10.0.0.0/8"))
    }

    @Test("session names, host names and malformed ranges are not addresses")
    func refused() {
        for text in [
            "friend", "Pianola", "studio-mac.local", "", "10.0.0", "10.0.0.1/33", "10.0.0.1/", "10.0.0.1/-1",
            "10.0.0.1/8/8", "fd00::/129", " 10.0.0.1", "10.0.0.1 ", "10.0.0.256", "10.0.0.1/٨",
        ] {
            #expect(RTPMIDIAddressRange(text) == nil, "\(text)")
        }
        // Nor does anything that is not an address match a range.
        #expect(RTPMIDIAddressRange("0.0.0.0/0")?.contains("friend") == false)
    }

    @Test("a peer named by host name is resolved to its address; one that does not resolve throws")
    func resolving() throws {
        #expect(try RTPMIDIAddressRange(resolving: "localhost") == range("127.0.0.1"))
        #expect(try RTPMIDIAddressRange(resolving: "10.0.0.9") == range("10.0.0.9"))
        #expect(throws: MIDIIOError.self) { try RTPMIDIAddressRange(resolving: "no-such-host.invalid") }
    }
}
