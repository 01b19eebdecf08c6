// The C library calls that Swift's Glibc module does not export, for PianolaSupport's threads.
#ifndef PIANOLA_CSYSTEMTHREAD_H
#define PIANOLA_CSYSTEMTHREAD_H

/// The calling thread's kernel id (`gettid()`): what `top -H`, `chrt -p` and profilers show, and
/// what the audio threads report as `audioThreadID`.
int pianola_current_thread_id(void);

/// Names the calling thread (`pthread_setname_np`; the first 15 bytes of `name` count), as `top -H`
/// and debuggers show it.
void pianola_set_thread_name(const char *name);

#endif
