// JACK's API for the JACKIO module, and the loader that opens libjack when a JACK driver is
// asked for.
//
// Pianola does not link libjack: a machine without JACK (or PipeWire's JACK library) still runs
// every other command, and `--driver jack` there fails with one line that says what to install.
// The functions Pianola calls are reached through `pianola_jack_api`, a table of pointers
// resolved once, whose types are the ones <jack/jack.h> declares (so the compiler checks every
// call against the header).
#ifndef PIANOLA_CJACK_H
#define PIANOLA_CJACK_H

#if __has_include(<jack/jack.h>)
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>
#else
#error "JACK's headers are missing: install libjack-jackd2-dev (sudo apt-get install libjack-jackd2-dev, or scripts/install-deps)"
#endif
#include <stddef.h>

#define PIANOLA_JACK_POINTER(name) __typeof__(name) *_Nonnull

/// The JACK functions Pianola calls.
typedef struct {
    PIANOLA_JACK_POINTER(jack_client_close) client_close;
    PIANOLA_JACK_POINTER(jack_get_client_name) get_client_name;
    PIANOLA_JACK_POINTER(jack_activate) activate;
    PIANOLA_JACK_POINTER(jack_deactivate) deactivate;
    PIANOLA_JACK_POINTER(jack_set_process_callback) set_process_callback;
    PIANOLA_JACK_POINTER(jack_on_info_shutdown) on_info_shutdown;
    PIANOLA_JACK_POINTER(jack_set_xrun_callback) set_xrun_callback;
    PIANOLA_JACK_POINTER(jack_set_buffer_size_callback) set_buffer_size_callback;
    PIANOLA_JACK_POINTER(jack_set_sample_rate_callback) set_sample_rate_callback;
    PIANOLA_JACK_POINTER(jack_set_freewheel_callback) set_freewheel_callback;
    PIANOLA_JACK_POINTER(jack_get_sample_rate) get_sample_rate;
    PIANOLA_JACK_POINTER(jack_get_buffer_size) get_buffer_size;
    PIANOLA_JACK_POINTER(jack_port_register) port_register;
    PIANOLA_JACK_POINTER(jack_port_get_buffer) port_get_buffer;
    PIANOLA_JACK_POINTER(jack_port_name) port_name;
    PIANOLA_JACK_POINTER(jack_port_by_name) port_by_name;
    PIANOLA_JACK_POINTER(jack_port_flags) port_flags;
    PIANOLA_JACK_POINTER(jack_port_type) port_type;
    PIANOLA_JACK_POINTER(jack_connect) connect;
    PIANOLA_JACK_POINTER(jack_get_ports) get_ports;
    PIANOLA_JACK_POINTER(jack_free) free;
    PIANOLA_JACK_POINTER(jack_midi_get_event_count) midi_get_event_count;
    PIANOLA_JACK_POINTER(jack_midi_event_get) midi_event_get;
    PIANOLA_JACK_POINTER(jack_transport_query) transport_query;
    PIANOLA_JACK_POINTER(jack_transport_start) transport_start;
    PIANOLA_JACK_POINTER(jack_transport_stop) transport_stop;
    PIANOLA_JACK_POINTER(jack_transport_locate) transport_locate;
    PIANOLA_JACK_POINTER(jack_set_sync_callback) set_sync_callback;
    PIANOLA_JACK_POINTER(jack_set_sync_timeout) set_sync_timeout;
    PIANOLA_JACK_POINTER(jack_set_timebase_callback) set_timebase_callback;
    PIANOLA_JACK_POINTER(jack_release_timebase) release_timebase;
} pianola_jack_api;

/// Opens libjack (once per process) and resolves every function Pianola calls, silencing the
/// library's own messages (Pianola reports failures itself). Returns the table when it is ready;
/// otherwise NULL, with the reason copied into `message` (at most `capacity` bytes,
/// NUL-terminated) when `message` is not NULL. The library is `libjack.so.0` (JACK 2's, or
/// PipeWire's JACK library), or the file named by the environment variable PIANOLA_JACK_LIBRARY.
const pianola_jack_api *_Nullable pianola_jack_load(char *_Nullable message, size_t capacity);

/// `jack_client_open` (variadic, so not callable from Swift) with `server` (NULL: the default
/// server, or $JACK_DEFAULT_SERVER) named. Call `pianola_jack_load` first.
jack_client_t *_Nullable pianola_jack_client_open(
    const char *_Nonnull name, jack_options_t options, jack_status_t *_Nullable status, const char *_Nullable server);

/// The calling thread's kernel id (gettid), for reporting JACK's process thread.
int pianola_jack_thread_id(void);

#endif
