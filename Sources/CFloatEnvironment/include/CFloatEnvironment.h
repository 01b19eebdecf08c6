// The calling thread's floating-point mode for subnormal numbers, set around a block of DSP.
//
// Arithmetic that produces or reads a subnormal number (below 2^-126 in single precision) takes
// a slow path on x86-64 (a microcode assist, about a hundred cycles per operation). A recursion
// that decays towards zero, as a reverb's tail does, passes through them unless something stops
// it. Flushing in software costs integer operations on the recursion's critical path every sample;
// the processor's flush-to-zero mode costs nothing per operation. These functions switch that mode
// on for the calling thread and back to what it was, so that a kernel can run its block with it.
// They are real functions, not inline ones: the compiler cannot move loads and stores of memory
// the call might reach across it. (It knows nothing of the mode, so arithmetic on values held in
// registers could in principle move: a kernel reads its inputs from, and writes its results to,
// such memory between the two calls.)
#ifndef PIANOLA_CFLOATENVIRONMENT_H
#define PIANOLA_CFLOATENVIRONMENT_H

/// Sets flush-to-zero (results that would be subnormal become 0) and denormals-are-zero
/// (subnormal inputs read as 0) for the calling thread: MXCSR's FTZ and DAZ bits on x86-64,
/// FPCR's FZ bit on AArch64. Returns the mode before, for `pianola_subnormals_restore`, with bit 63
/// set when the mode could not be set on this architecture (then nothing changed).
unsigned long long pianola_subnormals_flush(void);

/// The opposite: subnormal numbers computed and read as they are (IEEE 754's default), for the
/// calling thread. Returns the mode before, as `pianola_subnormals_flush` does. (A process may not
/// start in that mode: a library built with -ffast-math sets flush-to-zero when it is loaded, as
/// Debian's libSoundTouch does.)
unsigned long long pianola_subnormals_keep(void);

/// Puts back the mode `pianola_subnormals_flush` or `pianola_subnormals_keep` returned.
void pianola_subnormals_restore(unsigned long long previous);

/// Bit 63 of `pianola_subnormals_flush`'s result: no flush-to-zero mode was set.
#define PIANOLA_SUBNORMALS_UNSUPPORTED (1ull << 63)

#endif
