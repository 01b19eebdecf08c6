/// Pianola: a MIDI sequencer and SoundFont sampler for Linux.
///
/// `import Pianola` brings in the whole library: MIDI messages and files, the audio graph and its
/// nodes, the FluidSynth sampler and Pianola's own voice engine (with its SoundFont reader), effects, meters, audio files, varispeed and time-pitch, ALSA and
/// JACK audio, MIDI input and output, and the sessions that wire them together (offline rendering,
/// batches, playback, live MIDI, recording).
@_exported import ALSAIO
@_exported import AudioFiles
@_exported import AudioGraph
@_exported import Effects
@_exported import JACKIO
@_exported import MIDICore
@_exported import MIDIIO
@_exported import Meters
@_exported import RateAndPitch
@_exported import SMF
@_exported import Sampler
@_exported import Sequencer
@_exported import Sessions
@_exported import SoundFontFiles
@_exported import VoiceEngine
