#ifndef PIANOLA_ALLOCATION_COUNTER_H
#define PIANOLA_ALLOCATION_COUNTER_H

/// Starts counting heap allocations made by the calling thread.
void pianola_allocations_start(void);
/// Stops counting and returns how many allocations (malloc, calloc, realloc, memalign family)
/// the calling thread made since the matching start.
long pianola_allocations_stop(void);

/// Starts counting the allocations of every thread that runs with a real-time policy (SCHED_FIFO
/// or SCHED_RR): the audio threads of outputs and input clocks, whoever started them.
void pianola_allocations_watch_realtime_threads(void);
/// Stops that and returns how many allocations real-time threads made since the start.
long pianola_allocations_stop_watching_realtime_threads(void);

#endif
