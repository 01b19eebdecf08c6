// Sequencer: sequences, tracks, the MusicPlayer transport and beat↔frame scheduling, run as a
// pre-render step of the audio graph. It never knows FluidSynth: it hands timestamped MIDI to any
// node that takes MIDI. (Filled in by the engine work.)
import AudioGraph
import MIDICore
import MIDIFile
