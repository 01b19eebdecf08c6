// MIDIIO: MIDI in and out of the process. Live MIDI from the ALSA sequencer
// (`ALSASequencerInput`, through the CALSASequencer shim) and network MIDI sessions (RTP-MIDI,
// `RTPMIDIListener`, advertised over mDNS by `RTPMIDIAdvertisement`). Inputs decode through
// MIDICore, stamp each message on arrival and push it into their `MIDIEventQueue`; AudioGraph's
// `LiveMIDIScheduler` places the messages on the audio thread.
