// Effects: EQ, filter, reverb and limiter nodes, each with a parameter table. Pure DSP on top of
// AudioGraph: `EQNode` and `FilterNode` (cookbook or matched biquads, gliding parameters) so far.
import AudioGraph
