// Opens libjack on first use and fills Pianola's table of JACK functions (see CJACK.h).
//
// Every pointer is resolved before the table is handed out, so a call on the audio thread is an
// indirect call: no lock, no allocation.
#define _GNU_SOURCE
#include "CJACK.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_LIBRARY "libjack.so.0"

static pianola_jack_api api;
static __typeof__(jack_client_open) *client_open;
static __typeof__(jack_set_error_function) *set_error_function;
static __typeof__(jack_set_info_function) *set_info_function;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int ready;
static char failure[512];

static void silent(const char *message) { (void)message; }

static void *resolve(void *library, const char *library_name, const char *name) {
    void *function = dlsym(library, name);
    if (function == NULL && failure[0] == 0) {
        snprintf(failure, sizeof failure, "%s has no function %s (JACK 2 or PipeWire's JACK library is needed)",
                 library_name, name);
    }
    return function;
}

static void open_library(void) {
    const char *name = getenv("PIANOLA_JACK_LIBRARY");
    if (name == NULL || name[0] == 0) name = DEFAULT_LIBRARY;
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure,
                 "no JACK library (%s could not be loaded): install JACK 2 (apt-get install jackd2) or "
                 "PipeWire's JACK library (apt-get install pipewire-jack)",
                 name);
        return;
    }
#define RESOLVE(field, function) api.field = (__typeof__(function) *)resolve(library, name, #function);
    RESOLVE(client_close, jack_client_close)
    RESOLVE(get_client_name, jack_get_client_name)
    RESOLVE(activate, jack_activate)
    RESOLVE(deactivate, jack_deactivate)
    RESOLVE(set_process_callback, jack_set_process_callback)
    RESOLVE(on_info_shutdown, jack_on_info_shutdown)
    RESOLVE(set_xrun_callback, jack_set_xrun_callback)
    RESOLVE(set_buffer_size_callback, jack_set_buffer_size_callback)
    RESOLVE(set_sample_rate_callback, jack_set_sample_rate_callback)
    RESOLVE(set_freewheel_callback, jack_set_freewheel_callback)
    RESOLVE(get_sample_rate, jack_get_sample_rate)
    RESOLVE(get_buffer_size, jack_get_buffer_size)
    RESOLVE(port_register, jack_port_register)
    RESOLVE(port_get_buffer, jack_port_get_buffer)
    RESOLVE(port_name, jack_port_name)
    RESOLVE(port_by_name, jack_port_by_name)
    RESOLVE(port_flags, jack_port_flags)
    RESOLVE(port_type, jack_port_type)
    RESOLVE(connect, jack_connect)
    RESOLVE(get_ports, jack_get_ports)
    RESOLVE(free, jack_free)
    RESOLVE(midi_get_event_count, jack_midi_get_event_count)
    RESOLVE(midi_event_get, jack_midi_event_get)
    RESOLVE(transport_query, jack_transport_query)
    RESOLVE(transport_start, jack_transport_start)
    RESOLVE(transport_stop, jack_transport_stop)
    RESOLVE(transport_locate, jack_transport_locate)
    RESOLVE(set_sync_callback, jack_set_sync_callback)
    RESOLVE(set_sync_timeout, jack_set_sync_timeout)
    RESOLVE(set_timebase_callback, jack_set_timebase_callback)
    RESOLVE(release_timebase, jack_release_timebase)
#undef RESOLVE
    client_open = (__typeof__(jack_client_open) *)resolve(library, name, "jack_client_open");
    set_error_function = (__typeof__(jack_set_error_function) *)resolve(library, name, "jack_set_error_function");
    set_info_function = (__typeof__(jack_set_info_function) *)resolve(library, name, "jack_set_info_function");
    if (failure[0] != 0) return;
    // libjack prints its failures ("Cannot connect to server socket …") on stderr; Pianola says
    // what went wrong in one line of its own.
    set_error_function(silent);
    set_info_function(silent);
    ready = 1;
}

const pianola_jack_api *pianola_jack_load(char *message, size_t capacity) {
    pthread_once(&once, open_library);
    if (ready) return &api;
    if (message != NULL && capacity > 0) snprintf(message, capacity, "%s", failure);
    return NULL;
}

jack_client_t *pianola_jack_client_open(const char *name, jack_options_t options, jack_status_t *status,
                                        const char *server) {
    if (pianola_jack_load(NULL, 0) == NULL) return NULL;
    if (server != NULL) return client_open(name, options | JackServerName, status, server);
    return client_open(name, options, status);
}

int pianola_jack_thread_id(void) { return (int)syscall(SYS_gettid); }
