// MIDIFile: Standard MIDI File read/write (format 0/1/2, RMID), the tempo map and diagnostics for
// damaged files. Imports MIDICore only. (Filled in by the SMF work.)
import MIDICore
