import MIDICore

/// The note API: messages that apply at once, not at a frame offset.
extension SamplerNode {
    /// Starts `note` (0–127) at `velocity` (1–127; 0 releases the note instead) on `channel` (0–15).
    ///
    /// Like the rest of the note API it applies at once, not at a frame offset: the note sounds from
    /// the next block the synthesizer renders. It may be called from a control thread while the engine
    /// renders (FluidSynth serializes calls to its API). A note-on on a channel in
    /// `Settings.mutedChannels` is dropped.
    public func startNote(_ note: UInt8, withVelocity velocity: UInt8, onChannel channel: UInt8) {
        apply(.noteOn(channel: channel, note: note, velocity: velocity))
    }

    /// Releases `note` (0–127) on `channel` (0–15) at once; a held sustain pedal keeps it sounding
    /// until the pedal is released.
    public func stopNote(_ note: UInt8, onChannel channel: UInt8) {
        apply(.noteOff(channel: channel, note: note, velocity: 0))
    }

    /// Sends control change `controller` (0–127) with `value` (0–127) on `channel` (0–15) at once.
    /// Bank selects (controllers 0 and 32) on a channel with a program override are ignored.
    public func sendController(_ controller: UInt8, withValue value: UInt8, onChannel channel: UInt8) {
        apply(.controlChange(channel: channel, controller: controller, value: value))
    }

    /// Bends `channel` (0–15) at once: `value` is 14-bit, 0–16383, with 8192
    /// (`MIDIMessage.pitchBendCentre`) at rest; how far the ends reach is the channel's bend range.
    public func sendPitchBend(_ value: UInt16, onChannel channel: UInt8) {
        apply(.pitchBend(channel: channel, value: value))
    }

    /// Sends bank select MSB (controller 0) and LSB (controller 32), then a program change to
    /// `program` (0–127), on `channel` (0–15) at once, as MIDI input would. Unlike `selectProgram`, it
    /// does not throw when no loaded font has the preset. Ignored on a channel with a program override.
    public func sendProgramChange(_ program: UInt8, bankMSB: UInt8 = 0, bankLSB: UInt8 = 0, onChannel channel: UInt8) {
        apply(.controlChange(channel: channel, controller: 0, value: bankMSB))
        apply(.controlChange(channel: channel, controller: 32, value: bankLSB))
        apply(.programChange(channel: channel, program: program))
    }

    /// Sends channel pressure (aftertouch), 0–127, on `channel` (0–15) at once.
    public func sendPressure(_ pressure: UInt8, onChannel channel: UInt8) {
        apply(.channelPressure(channel: channel, pressure: pressure))
    }

    /// Sends polyphonic key pressure `value` (0–127) for `key` (0–127) on `channel` (0–15) at once.
    public func sendPressure(forKey key: UInt8, withValue value: UInt8, onChannel channel: UInt8) {
        apply(.polyphonicKeyPressure(channel: channel, note: key, pressure: value))
    }

    /// Sends any MIDI message at once.
    public func sendMIDI(_ message: MIDIMessage) { apply(message) }
}
