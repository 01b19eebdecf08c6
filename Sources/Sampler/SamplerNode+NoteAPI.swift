import MIDICore

/// The note API: messages that apply at the start of the next render quantum, not at a frame offset.
///
/// Every call checks its numbers as MIDI 1.0 carries them (channels 0-15, notes, velocities,
/// controllers and values 0-127, pitch bend 0-16383) and throws ``MIDIValueError`` for one out of
/// range, sending nothing: a number is never masked into another nor dropped without a word.
extension SamplerNode {
    /// Starts `note` (0–127) at `velocity` (1–127; 0 releases the note instead) on `channel` (0–15).
    ///
    /// Like the rest of the note API it applies at the start of the next quantum the render
    /// thread renders, not at a frame offset, in the order the calls were made: the note sounds
    /// from that quantum on. It may be called from any thread while the engine renders; it does
    /// not wait for the render thread, nor for a font or samples loading (the message goes
    /// through a lock-free queue; only when 512 messages wait for the next quantum is it applied
    /// at once, holding the synthesizer). A note-on on a channel in `Settings.mutedChannels` is
    /// dropped.
    public func startNote(
        _ note: UInt8, withVelocity velocity: UInt8, onChannel channel: UInt8
    ) throws(MIDIValueError) {
        try checkedSend(.noteOn(channel: channel, note: note, velocity: velocity))
    }

    /// Releases `note` (0–127) on `channel` (0–15) at the start of the next render quantum; a
    /// held sustain pedal keeps it sounding until the pedal is released.
    public func stopNote(_ note: UInt8, onChannel channel: UInt8) throws(MIDIValueError) {
        try checkedSend(.noteOff(channel: channel, note: note, velocity: 0))
    }

    /// Sends control change `controller` (0–127) with `value` (0–127) on `channel` (0–15), applied
    /// at the start of the next render quantum. Bank selects (controllers 0 and 32) on a channel
    /// with a program override are ignored.
    public func sendController(
        _ controller: UInt8, withValue value: UInt8, onChannel channel: UInt8
    ) throws(MIDIValueError) {
        try checkedSend(.controlChange(channel: channel, controller: controller, value: value))
    }

    /// Bends `channel` (0–15) at the start of the next render quantum: `value` is 14-bit,
    /// 0–16383, with 8192 (`MIDIMessage.pitchBendCentre`) at rest; how far the ends reach is the
    /// channel's bend range.
    public func sendPitchBend(_ value: UInt16, onChannel channel: UInt8) throws(MIDIValueError) {
        try checkedSend(.pitchBend(channel: channel, value: value))
    }

    /// Sends bank select MSB (controller 0) and LSB (controller 32), then a program change to
    /// `program` (0–127), on `channel` (0–15), as MIDI input would, applied at the start of the
    /// next render quantum. Unlike `selectProgram`, it does not throw when no loaded font has the
    /// preset. Ignored on a channel with a program override.
    public func sendProgramChange(
        _ program: UInt8, bankMSB: UInt8 = 0, bankLSB: UInt8 = 0, onChannel channel: UInt8
    ) throws(MIDIValueError) {
        // All three checked before any is sent: a refused call changes nothing.
        let msb = try MIDIMessage.controlChange(channel: channel, controller: 0, value: bankMSB).validated()
        let lsb = try MIDIMessage.controlChange(channel: channel, controller: 32, value: bankLSB).validated()
        let change = try MIDIMessage.programChange(channel: channel, program: program).validated()
        send(msb)
        send(lsb)
        send(change)
    }

    /// Sends channel pressure (aftertouch), 0–127, on `channel` (0–15), applied at the start of
    /// the next render quantum.
    public func sendPressure(_ pressure: UInt8, onChannel channel: UInt8) throws(MIDIValueError) {
        try checkedSend(.channelPressure(channel: channel, pressure: pressure))
    }

    /// Sends polyphonic key pressure `value` (0–127) for `key` (0–127) on `channel` (0–15),
    /// applied at the start of the next render quantum.
    public func sendPressure(
        forKey key: UInt8, withValue value: UInt8, onChannel channel: UInt8
    ) throws(MIDIValueError) {
        try checkedSend(.polyphonicKeyPressure(channel: channel, note: key, pressure: value))
    }

    /// Sends any MIDI message, applied at the start of the next render quantum (SysEx included).
    /// Throws ``MIDIValueError`` when a number in it is out of range (see ``MIDIMessage/validated()``).
    public func sendMIDI(_ message: MIDIMessage) throws(MIDIValueError) { try checkedSend(message) }

    /// Sends `message` once its numbers are checked.
    private func checkedSend(_ message: MIDIMessage) throws(MIDIValueError) {
        send(try message.validated())
    }
}
