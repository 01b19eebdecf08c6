import Foundation
import MIDICore
import Testing

@testable import MIDIIO

/// The journals Pianola writes, read by an independent decoder: Wireshark's RTP-MIDI dissector
/// (`tshark`, Debian's; `scripts/install-deps --test` installs it), from a capture file written here.
@Suite("RTP-MIDI journals decoded by tshark")
struct JournalDecoderTests {
    /// `packets` (RTP-MIDI payloads) as a capture file of raw IPv4/UDP datagrams to port 5005.
    func capture(_ packets: [[UInt8]]) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        // pcap: magic, version 2.4, zone, sigfigs, snaplen, link type 101 (raw IP).
        var file = le32(0xA1B2_C3D4) + [2, 0, 4, 0] + le32(0) + le32(0) + le32(65_535) + le32(101)
        for (index, payload) in packets.enumerated() {
            let udp = be16(5004) + be16(5005) + be16(8 + payload.count) + [0, 0] + payload
            var ip: [UInt8] = [0x45, 0] + be16(20 + udp.count) + be16(index) + [0x40, 0, 64, 17, 0, 0]
            ip += [127, 0, 0, 1, 127, 0, 0, 1]
            var sum = stride(from: 0, to: 20, by: 2).reduce(0) { $0 + (Int(ip[$1]) << 8 | Int(ip[$1 + 1])) }
            while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
            ip[10...11] = be16(~sum & 0xFFFF)[...]
            let datagram = ip + udp
            file +=
                le32(UInt32(index)) + le32(0) + le32(UInt32(datagram.count)) + le32(UInt32(datagram.count)) + datagram
        }
        return file
    }

    /// The fields tshark prints for each packet, in this order.
    static let fields = [
        "rtp.seq", "rtpmidi.check_Seq_num", "rtpmidi.chanjour_channel", "rtpmidi.cj_chapter_p_program",
        "rtpmidi.cj_chapter_p_bank_msb", "rtpmidi.cj_chapter_p_bank_lsb", "rtpmidi.cj_chapter_c_number",
        "rtpmidi.cj_chapter_c_value", "rtpmidi.cj_chapter_w_first", "rtpmidi.cj_chapter_w_second",
        "rtpmidi.cj_chapter_n_log_note", "rtpmidi.cj_chapter_n_log_velocity", "rtpmidi.cj_chapter_n_low",
        "rtpmidi.cj_chapter_n_high", "rtpmidi.cj_chapter_n_log_octet", "rtpmidi.cj_chapter_t_pressure",
        "rtpmidi.cj_chapter_a_log_note", "rtpmidi.cj_chapter_a_log_pressure",
    ]

    /// What tshark should print of `journal` in packet `sequence`: numbers in decimal, lists joined by commas.
    func expected(_ journal: RecoveryJournal, sequence: UInt16) -> [String] {
        let channels = journal.channels
        func list(_ values: [Int]) -> String { values.map(String.init).joined(separator: ",") }
        let notes = channels.compactMap(\.notes)
        let offbits = notes.flatMap { chapter -> [Int] in
            guard let low = chapter.released.min().map({ Int($0) / 8 }),
                let high = chapter.released.max().map({ Int($0) / 8 })
            else { return [] }
            return (low...high).map { octet in
                chapter.released.filter { Int($0) / 8 == octet }.reduce(0) { $0 | 0x80 >> (Int($1) % 8) }
            }
        }
        return [
            String(sequence), String(journal.checkpoint), list(channels.map { Int($0.channel) }),
            list(channels.compactMap { $0.program.map { Int($0.program) } }),
            list(channels.compactMap { $0.program?.bank.map { Int($0.msb) } }),
            list(channels.compactMap { $0.program?.bank.map { Int($0.lsb) } }),
            list(channels.flatMap { $0.controllers.map { Int($0.controller) } }),
            list(channels.flatMap { $0.controllers.compactMap { $0.value.map(Int.init) } }),
            list(channels.compactMap { $0.pitchWheel.map { Int($0.lsb) } }),
            list(channels.compactMap { $0.pitchWheel.map { Int($0.msb) } }),
            list(notes.flatMap { $0.logs.map { Int($0.note) } }),
            list(notes.flatMap { $0.logs.map { Int($0.velocity) } }),
            list(notes.map { $0.released.min().map { Int($0) / 8 } ?? 15 }),
            list(notes.map { $0.released.max().map { Int($0) / 8 } ?? 1 }), list(offbits),
            list(channels.compactMap { $0.channelPressure.map(Int.init) }),
            list(channels.flatMap { $0.polyPressure.map { Int($0.note) } }),
            list(channels.flatMap { $0.polyPressure.map { Int($0.pressure) } }),
        ]
    }

    /// tshark's line for a packet, its hexadecimal numbers made decimal.
    func decimal(_ line: Substring) -> [String] {
        line.split(separator: ";", omittingEmptySubsequences: false).map { field in
            field.split(separator: ",").map { value in
                value.hasPrefix("0x") ? String(Int(value.dropFirst(2), radix: 16) ?? -1) : String(value)
            }.joined(separator: ",")
        }
    }

    /// tshark's lines for `packets` written to a capture file, `fields` separated by ";".
    func decode(_ packets: [[UInt8]], fields: [String]) throws -> [Substring] {
        let tshark = "/usr/bin/tshark"
        try #require(
            FileManager.default.isExecutableFile(atPath: tshark),
            "no tshark (Debian tshark; scripts/install-deps --test installs it)")
        let path = NSTemporaryDirectory() + "/pianola-journals-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pcap"
        try #require(FileManager.default.createFile(atPath: path, contents: Data(capture(packets))))
        defer { unlink(path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tshark)
        process.arguments =
            ["-r", path, "-d", "udp.port==5005,rtp", "-d", "rtp.pt==97,rtpmidi", "-T", "fields", "-E", "separator=;"]
            + ["-E", "occurrence=a", "-E", "aggregator=,"] + fields.flatMap { ["-e", $0] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = text.split(separator: "\n")
        try #require(lines.count == packets.count, "tshark printed \(lines.count) lines: \(text)")
        return lines
    }

    @Test("program and bank, controllers, wheel, notes and OFFBITS, pressures: tshark reads what was meant")
    func tsharkReadsOurJournals() throws {
        var history = JournalHistory(firstSequence: 0x4000)
        let stream: [[MIDIMessage]] = [
            [
                .controlChange(channel: 0, controller: 0, value: 2),
                .controlChange(channel: 0, controller: 32, value: 3),
            ],
            [.programChange(channel: 0, program: 24), .controlChange(channel: 0, controller: 7, value: 100)],
            [.noteOn(channel: 0, note: 60, velocity: 90), .noteOn(channel: 0, note: 64, velocity: 70)],
            [.controlChange(channel: 0, controller: 64, value: 127), .noteOff(channel: 0, note: 64, velocity: 0)],
            [.pitchBend(channel: 0, value: 0x2345), .channelPressure(channel: 0, pressure: 50)],
            [.noteOn(channel: 9, note: 36, velocity: 120), .noteOff(channel: 9, note: 36, velocity: 0)],
            [.polyphonicKeyPressure(channel: 0, note: 60, pressure: 30), .noteOn(channel: 9, note: 42, velocity: 80)],
            [.noteOff(channel: 0, note: 67, velocity: 0), .noteOn(channel: 0, note: 81, velocity: 1)],
        ]
        var packets: [[UInt8]] = []
        var journals: [(UInt16, RecoveryJournal)] = []
        for (index, messages) in stream.enumerated() {
            let sequence = 0x4000 + UInt16(index)
            let journal = history.journal(forPacket: sequence)
            journals.append((sequence, journal))
            let list = messages.enumerated().flatMap { index, message -> [UInt8] in
                index == 0 ? message.wireBytes : [0] + message.wireBytes
            }
            packets.append(
                RTPMIDITestPeer.packet(list, sequence: sequence, ssrc: 0x5049_414E, journal: journal.serialized()))
            for message in messages { history.record(message, inPacket: sequence) }
            if index == 5 { history.acknowledge(through: 0x4001) }  // RS: the bank and program trimmed
        }
        let lines = try decode(packets, fields: Self.fields)
        var compared = 0
        for (line, (sequence, journal)) in zip(lines, journals) where !journal.channels.isEmpty {
            #expect(decimal(line) == expected(journal, sequence: sequence), "packet \(sequence)")
            compared += 1
        }
        #expect(compared == packets.count - 1)
        // The last journal holds every chapter Pianola writes but P (trimmed by the RS).
        let last = try #require(journals.last?.1)
        #expect(last.channels.map(\.channel) == [0, 9] && last.channels[0].program == nil)
        #expect(last.channels[0].pitchWheel != nil && last.channels[0].polyPressure.count == 1)
    }

    @Test("chapter M: RPN and NRPN logs, the selection and PENDING, as tshark reads them")
    func tsharkReadsParameters() throws {
        var history = JournalHistory(firstSequence: 0x100)
        let cc = { (controller: UInt8, value: UInt8) in
            MIDIMessage.controlChange(channel: 2, controller: controller, value: value)
        }
        let stream: [[MIDIMessage]] = [
            [cc(101, 0), cc(100, 0), cc(6, 12), cc(38, 50)],  // RPN 0: the bend range
            [cc(99, 3), cc(98, 0x21), cc(6, 64), cc(97, 0), cc(97, 0)],  // NRPN 0x1A1, stepped down twice
            [cc(101, 0)],  // an MSB alone: PENDING
            [.noteOn(channel: 2, note: 60, velocity: 1)],
        ]
        var packets: [[UInt8]] = []
        var journals: [ChannelJournal.Parameters] = []
        for (index, messages) in stream.enumerated() {
            let sequence = 0x100 + UInt16(index)
            let journal = history.journal(forPacket: sequence)
            if let chapter = journal.channels.first?.parameters { journals.append(chapter) }
            let list = messages.enumerated().flatMap { index, message -> [UInt8] in
                index == 0 ? message.wireBytes : [0] + message.wireBytes
            }
            packets.append(
                RTPMIDITestPeer.packet(list, sequence: sequence, ssrc: 0x5049_414E, journal: journal.serialized()))
            for message in messages { history.record(message, inPacket: sequence) }
        }
        let fields = [
            "rtpmidi.cj_chapter_m_eflag", "rtpmidi.cj_chapter_m_pflag", "rtpmidi.cj_chapter_m_pending",
            "rtpmidi.cj_chapter_m_log_pnum_lsb", "rtpmidi.cj_chapter_m_log_qflag", "rtpmidi.cj_chapter_m_log_pnum_msb",
            "rtpmidi.cj_chapter_m_log_msb", "rtpmidi.cj_chapter_m_log_lsb", "rtpmidi.cj_chapter_m_log_a_button",
            "rtpmidi.cj_chapter_m_log_a_button_gflag",
        ]
        let lines = try decode(packets, fields: fields).map(decimal)
        #expect(journals.count == 3)
        // After the RPN: E, one short log (U and Z: an RPN below 128), ENTRY-MSB 12, ENTRY-LSB 50.
        #expect(lines[1] == ["1", "0", "", "0", "", "", "12", "50", "", ""])
        // After the NRPN: long logs, the NRPN's Q set, MSB 3; A-BUTTON 2 with G (the sign) set.
        #expect(lines[2] == ["1", "0", "", "0,33", "0,1", "0,3", "12,64", "50", "2", "1"])
        // An MSB alone: P and PENDING 0, E clear. (Wireshark 4.0 then reads one octet past the
        // chapter when P is set, and calls the rest malformed: the logs are compared above.)
        #expect(lines[3].prefix(3) == ["0", "1", "0"])
        #expect(journals[2].pending?.msb == 0 && journals[2].logs.count == 2)
    }

    @Test("chapter X: a SysEx with its number, as tshark reads it")
    func tsharkReadsSysEx() throws {
        var history = JournalHistory(firstSequence: 0x200)
        let masterVolume: [UInt8] = [0x7F, 0x7F, 0x04, 0x01, 0x00, 0x60]
        history.record(.systemExclusive(masterVolume), inPacket: 0x200)
        let journal = history.journal(forPacket: 0x201)
        let packet = RTPMIDITestPeer.packet(
            [0x90, 60, 1], sequence: 0x201, ssrc: 0x5049_414E, journal: journal.serialized())
        let fields = [
            "rtpmidi.sysjour_toc_x", "rtpmidi.sj_chapter_x_tflag", "rtpmidi.sj_chapter_x_dflag",
            "rtpmidi.sj_chapter_x_sta", "rtpmidi.sj_chapter_x_tcount", "rtpmidi.sj_chapter_x_data",
            "rtpmidi.sj_chapter_x_invalid_data", "_ws.malformed",
        ]
        let line = try #require(try decode([packet], fields: fields).first)
        // X in the system journal; T and D; STA 3 (ended with F7); TCOUNT 1; DATA the command's
        // octets after F0 up to the F7 that ends it (tshark leaves the end octet out); nothing invalid.
        #expect(
            line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
                == ["1", "1", "1", "0x03", "1", "7f7f04010060", "", ""])
    }
}
