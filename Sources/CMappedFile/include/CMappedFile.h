// Read-only file mappings that survive the file being truncated under them.
//
// Reading a large MIDI file through a mapping of the page cache costs a fraction of copying it
// into fresh memory (which the kernel must zero page by page). A mapping has one hazard: if
// another process truncates the file while it is mapped, touching the vanished pages raises
// SIGBUS. Mappings made here are registered with a SIGBUS handler that, for an address inside
// one of them, puts a zero page there and marks the mapping damaged; the reader goes on over
// zeros, and its caller, seeing the mark, reads the file again. Any other SIGBUS goes to the
// handler installed before (or the default action), unchanged.
#ifndef PIANOLA_CMAPPEDFILE_H
#define PIANOLA_CMAPPEDFILE_H

#include <stddef.h>

/// Maps `length` (> 0) bytes of the open file `descriptor` read-only and registers the mapping.
/// Returns its address and sets `*slot`, or returns NULL (errno set; ENOSPC when every slot is
/// taken), in which case nothing is mapped.
const void *pianola_map_file(int descriptor, size_t length, int *slot);

/// 1 when a read inside the mapping in `slot` found the file shorter than when it was mapped.
int pianola_mapped_file_damaged(int slot);

/// Unregisters and unmaps a mapping made by pianola_map_file.
void pianola_unmap_file(const void *address, size_t length, int slot);

#endif
