import CALSASequencer
import Testing

@testable import MIDIIO

/// A destination port as the sequencer would list it.
private func destination(client: Int, clientName: String, portName: String) -> MIDISequencerPort {
    var info = pianola_seq_port_info()
    info.client = Int32(client)
    withUnsafeMutableBytes(of: &info.client_name) { raw in
        for (index, byte) in clientName.utf8.prefix(63).enumerated() { raw[index] = byte }
    }
    withUnsafeMutableBytes(of: &info.port_name) { raw in
        for (index, byte) in portName.utf8.prefix(63).enumerated() { raw[index] = byte }
    }
    info.capability = UInt32(PIANOLA_SEQ_CAP_WRITE | PIANOLA_SEQ_CAP_SUBS_WRITE)
    return MIDISequencerPort(info)
}

@Suite("ALSA sequencer output: naming destinations")
struct ALSASequencerOutputNamingTests {
    @Test("an unknown destination's error lists the near names first, every destination when none is near")
    func nearMatches() {
        let ports = [
            destination(client: 20, clientName: "USB MIDI Interface", portName: "Port 1"),
            destination(client: 21, clientName: "Midi Through", portName: "Midi Through Port-0"),
            destination(client: 22, clientName: "Drum Machine", portName: "in"),
        ]
        #expect(ports.allSatisfy { $0.isDestination })
        #expect(
            ALSASequencerOutput.nearMatches(for: "usb midi", in: ports).first?.hasPrefix("USB MIDI Interface") == true)
        #expect(ALSASequencerOutput.nearMatches(for: "Drum Machin", in: ports) == ["Drum Machine:in (22:0)"])
        #expect(ALSASequencerOutput.nearMatches(for: "zzzz", in: ports).count == 3, "none near: every destination")
        let error = MIDIIOError.unknownDestination("Drum Machin", nearMatches: ["Drum Machine:in (22:0)"])
        #expect(
            error.description.contains("'Drum Machin'") && error.description.contains("near: Drum Machine:in (22:0)"))
    }

    @Test("an unknown source or destination names the library call that lists the ports, not a command")
    func unknownPortWording() {
        let destination = MIDIIOError.unknownDestination("Drum Machin", nearMatches: ["Drum Machine:in (22:0)"])
        #expect(
            destination.description
                == "MIDI destination 'Drum Machin': no such sequencer port; near: Drum Machine:in (22:0) "
                + "(ALSASequencerOutput.destinations() lists them)")
        let source = MIDIIOError.unknownSource("Keystation", reason: "no such port")
        #expect(source.description == "MIDI source 'Keystation': no such port (ALSASequencerInput.ports() lists them)")
        #expect(!destination.description.contains("pianola") && !source.description.contains("pianola"))
    }
}
