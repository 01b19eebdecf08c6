// Effects: EQ, filter, reverb and limiter nodes, each with a parameter table. Pure DSP on top of
// AudioGraph: `EQNode` and `FilterNode` (cookbook or matched biquads, gliding parameters),
// `ReverbNode` (feedback delay network with input diffusion; Dattorro's plate), `LimiterNode`
// (look-ahead, sample or true peak), and `EffectChain` (the `--fx` specs as nodes).
import AudioGraph
