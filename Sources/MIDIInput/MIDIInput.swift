// MIDIInput: live MIDI from the ALSA sequencer (`ALSASequencerInput`, through the CALSASequencer
// shim) and, later, RTP-MIDI sessions. Inputs decode through MIDICore, stamp each message on
// arrival and push it into their `MIDIEventQueue`; AudioGraph's `LiveMIDIScheduler` places the
// messages on the audio thread.
import MIDICore
import NIOCore
import NIOPosix
