// Effects: EQ, filter, reverb and limiter nodes, each with a parameter table. Pure DSP on top of
// AudioGraph. (Filled in by the effects work.)
import AudioGraph
