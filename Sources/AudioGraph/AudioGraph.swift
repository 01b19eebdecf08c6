// AudioGraph: the engine, the node protocol, buses, the mixer, manual rendering, taps and the
// real-time command queue. Pure Swift: no C library, no device. (Filled in by the engine work.)
import Atomics
import MIDICore
