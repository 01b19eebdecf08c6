// MIDIInput: ALSA sequencer input and RTP-MIDI (AppleMIDI) sessions; decodes through MIDICore,
// timestamps on arrival and hands events to the audio thread. (Filled in by the live-input work,
// which adds the ALSA sequencer through its own small C target, so that each C target keeps a
// single importing module: CALSA belongs to AudioIO.)
import MIDICore
import NIOCore
import NIOPosix
