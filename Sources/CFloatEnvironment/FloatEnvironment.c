// See CFloatEnvironment.h.
#include "CFloatEnvironment.h"

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#include <xmmintrin.h>

enum { FLUSH_TO_ZERO = 1u << 15, DENORMALS_ARE_ZERO = 1u << 6 };

unsigned long long pianola_subnormals_flush(void) {
    unsigned int previous = _mm_getcsr();
    _mm_setcsr(previous | FLUSH_TO_ZERO | DENORMALS_ARE_ZERO);
    return previous;
}

unsigned long long pianola_subnormals_keep(void) {
    unsigned int previous = _mm_getcsr();
    _mm_setcsr(previous & ~(unsigned int)(FLUSH_TO_ZERO | DENORMALS_ARE_ZERO));
    return previous;
}

void pianola_subnormals_restore(unsigned long long previous) {
    if (!(previous & PIANOLA_SUBNORMALS_UNSUPPORTED)) _mm_setcsr((unsigned int)previous);
}

#elif defined(__aarch64__)

unsigned long long pianola_subnormals_flush(void) {
    unsigned long long previous;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(previous));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(previous | (1ull << 24)));  // FZ
    return previous & ~PIANOLA_SUBNORMALS_UNSUPPORTED;
}

unsigned long long pianola_subnormals_keep(void) {
    unsigned long long previous;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(previous));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(previous & ~(1ull << 24)));
    return previous & ~PIANOLA_SUBNORMALS_UNSUPPORTED;
}

void pianola_subnormals_restore(unsigned long long previous) {
    if (!(previous & PIANOLA_SUBNORMALS_UNSUPPORTED)) __asm__ __volatile__("msr fpcr, %0" : : "r"(previous));
}

#else

unsigned long long pianola_subnormals_flush(void) { return PIANOLA_SUBNORMALS_UNSUPPORTED; }

unsigned long long pianola_subnormals_keep(void) { return PIANOLA_SUBNORMALS_UNSUPPORTED; }

void pianola_subnormals_restore(unsigned long long previous) { (void)previous; }

#endif
