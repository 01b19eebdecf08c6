// libFuzzer entry point for the network MIDI parsers: RTP-MIDI packets (RFC 6295 command lists
// and recovery journals) and AppleMIDI session commands. Built and run by scripts/fuzz
// with MIDICore and the pure parsing files of MIDIIO (not part of the package build).
//
// Invariants checked on every input:
// - parsing never crashes or hangs: a malformed packet is a typed error;
// - a parsed session command serializes to bytes that parse back to it;
// - a parsed packet's commands serialize and parse back equal (or serializing refuses them with
//   its typed error when running status made the list too long for one packet);
// - every command's bytes decode as MIDI without a crash;
// - a journal parses or is refused with its typed error; one that parses serializes to bytes that
//   parse back to the chapters written, and the repair it asks of a receiver holding notes is
//   made of channel messages only.
import MIDICore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if AppleMIDICommand.isCommand(bytes) {
        if let command = try? AppleMIDICommand(parsing: bytes) {
            precondition((try? AppleMIDICommand(parsing: command.bytes)) == command, "command round trip")
        }
        return 0
    }
    guard let packet = try? RTPMIDIPacket(parsing: bytes) else { return 0 }
    do throws(RTPMIDIPacketError) {
        let again = try RTPMIDIPacket(
            parsing: try RTPMIDIPacket.serialize(
                sequence: packet.sequence, timestamp: packet.timestamp, ssrc: packet.ssrc, commands: packet.commands))
        precondition(again.commands == packet.commands, "packet round trip")
        precondition(again.sequence == packet.sequence && again.ssrc == packet.ssrc, "header round trip")
    } catch .cannotSerialize {
        // Running status filled in can make a list longer than one packet holds: refused, typed.
    } catch {
        preconditionFailure("a parsed packet's commands did not parse back: \(error)")
    }
    var decoder = MIDIStreamDecoder(maximumSysExLength: 4096)
    for command in packet.commands { _ = decoder.decode(command.bytes) }
    if packet.hasJournal, let journal = try? RecoveryJournal(parsing: packet.journal[...]) {
        let again = try? RecoveryJournal(parsing: journal.serialized()[...])
        let written = journal.channels.filter { !$0.isEmpty }.map(\.channel)
        precondition(again?.channels.map(\.channel) == written, "journal round trip")
        var receiver = MIDIChannelStates()
        for note in [60, 64, 67] as [UInt8] { receiver.apply(.noteOn(channel: 0, note: note, velocity: 100)) }
        for repair in receiver.repairs(from: journal) {
            let isSysEx = if case .systemExclusive = repair { true } else { false }
            precondition(repair.channel != nil || isSysEx, "a repair that is neither a channel message nor a SysEx")
            receiver.apply(repair)
        }
    }
    return 0
}
