#ifndef PIANOLA_ALLOCATION_COUNTER_H
#define PIANOLA_ALLOCATION_COUNTER_H

/// Starts counting heap allocations made by the calling thread.
void pianola_allocations_start(void);
/// Stops counting and returns how many allocations (malloc, calloc, realloc, memalign family)
/// the calling thread made since the matching start.
long pianola_allocations_stop(void);

/// Starts counting the allocations of one thread, by its kernel id (`gettid()`), whoever started it:
/// an output's or an input clock's audio thread (`audioThreadID`).
void pianola_allocations_watch_thread(int thread);
/// Stops that and returns how many allocations that thread made since the start.
long pianola_allocations_stop_watching_thread(void);

/// The calling thread's kernel id, as `pianola_allocations_watch_thread` takes it.
int pianola_allocations_current_thread(void);

#endif
