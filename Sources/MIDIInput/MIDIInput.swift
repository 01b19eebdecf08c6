// MIDIInput: ALSA sequencer input and RTP-MIDI (AppleMIDI) sessions; decodes through MIDICore,
// timestamps on arrival and hands events to the audio thread. (Filled in by the live-input work.)
import CALSA
import MIDICore
import NIOCore
import NIOPosix
