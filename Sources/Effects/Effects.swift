// Effects: EQ, filter, reverb, limiter and delay nodes, each with a parameter table. Pure DSP on top of
// AudioGraph, in folders by family, each node beside the render kernels it runs:
//   Chain/     `EffectChain` (the `--fx` specs as nodes), `EffectSpec`, `EffectDescription` and
//              `EffectParameter` (the tables `pianola fx list` prints).
//   Biquad/    a band's settings (`FilterType`, `FilterBand`, `FilterDesign`) and its coefficients:
//              the Audio EQ Cookbook and the matched designs (`BiquadCoefficients`,
//              `BandCoefficients`, the settled design's `CorrectionFit`).
//   EQ/        `EQNode` and `FilterNode` (gliding parameters), their bands and biquad kernels.
//   Reverb/    `ReverbNode`: `PreDelay`, `InputDiffuser` and a 16-line `FeedbackDelayNetwork`, or
//              Dattorro's plate (`DattorroPlate`).
//              `SynthReverb`: FluidSynth's 8-line reverb for a synthesizer's mono send.
//   Chorus/    `ChorusNode` and its core `Chorus`: FluidSynth's chorus.
//   Dynamics/  `LimiterNode` (look-ahead, sample or true peak) and its `LookAheadLimiter`.
//   Delay/     `DelayNode` (fractional, gliding, tempo-synced) and its `FractionalDelayLine`.
// Render state lives in `RealTimeBuffer`s, allocated when a node is prepared and freed with it.
import AudioGraph
