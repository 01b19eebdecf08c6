// MIDICore: MIDI 1.0 message types, the byte-stream decoder (running status, SysEx) and the
// encoder, shared by the file reader, the ALSA sequencer input and network MIDI.
// Imports nothing but the standard library. (Filled in by the MIDI-core work.)
