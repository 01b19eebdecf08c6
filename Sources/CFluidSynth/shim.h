// FluidSynth's API for the Sampler module. (No pkg-config here: fluidsynth.pc lists its static
// dependencies' flags, which SwiftPM rejects with warnings, and the header needs none of them.)
#if __has_include(<fluidsynth.h>)
#include <fluidsynth.h>
#else
#error "FluidSynth's headers are missing: install libfluidsynth-dev (sudo apt-get install libfluidsynth-dev, or scripts/install-deps)"
#endif
