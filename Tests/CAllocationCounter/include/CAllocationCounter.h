#ifndef PIANOLA_ALLOCATION_COUNTER_H
#define PIANOLA_ALLOCATION_COUNTER_H

/// Starts counting heap allocations made by the calling thread.
void pianola_allocations_start(void);
/// Stops counting and returns how many allocations (malloc, calloc, realloc, memalign family)
/// the calling thread made since the matching start.
long pianola_allocations_stop(void);

#endif
