#ifndef PIANOLA_ALSA_SEQUENCER_H
#define PIANOLA_ALSA_SEQUENCER_H

#include <stdint.h>

/// A small C face of the ALSA sequencer for MIDIIO: alsa-lib's event macros, unions and
/// variadic error handler are not callable from Swift, so this shim opens a client with one
/// writable port, subscribes to sources and to the System Announce port, and turns each incoming
/// event into MIDI bytes (through alsa-lib's own `snd_midi_event` decoder) or an announcement.

typedef struct pianola_seq pianola_seq;

/// Opens the sequencer (non-blocking) as client `client_name` with one port `port_name` that others
/// can write to and subscribe to. Returns 0 or a negative errno; `*out` is set on success.
int pianola_seq_open(const char *client_name, const char *port_name, pianola_seq **out);
void pianola_seq_close(pianola_seq *seq);
int pianola_seq_client(const pianola_seq *seq);
int pianola_seq_port(const pianola_seq *seq);

/// Resolves "CLIENT:PORT", "CLIENT" (port 0) or a client name (or its prefix) as alsa-lib does.
int pianola_seq_parse_address(pianola_seq *seq, const char *text, int *client, int *port);
/// Subscribes our port to a source port (its events come to us) / removes that subscription.
int pianola_seq_connect_from(pianola_seq *seq, int client, int port);
int pianola_seq_disconnect_from(pianola_seq *seq, int client, int port);

enum {
    PIANOLA_SEQ_NONE = 0,
    PIANOLA_SEQ_MIDI = 1,          ///< `bytes`/`length`: one MIDI message (or a SysEx chunk) as bytes
    PIANOLA_SEQ_PORT_START = 2,    ///< `address_*`: a port appeared
    PIANOLA_SEQ_PORT_EXIT = 3,     ///< `address_*`: a port went away
    PIANOLA_SEQ_CLIENT_START = 4,
    PIANOLA_SEQ_CLIENT_EXIT = 5,
    PIANOLA_SEQ_SUBSCRIBED = 6,    ///< a subscription involving our port was made (`address_*` = sender)
    PIANOLA_SEQ_UNSUBSCRIBED = 7,
    PIANOLA_SEQ_OVERRUN = 8,       ///< the kernel's input buffer overflowed: events were lost
    PIANOLA_SEQ_OTHER = 9,
};

typedef struct {
    int kind;
    uint64_t arrival_ns;           ///< CLOCK_MONOTONIC when the kernel delivered the event to us
    uint64_t read_ns;              ///< CLOCK_MONOTONIC when this process read it
    int source_client, source_port;
    int address_client, address_port;
    int destination_client, destination_port;  ///< SUBSCRIBED/UNSUBSCRIBED: the receiving end
    const unsigned char *bytes;    ///< valid until the next read
    int length;
} pianola_seq_event;

/// Waits up to `timeout_ms` (-1: no limit) for one event. Returns 1 with `*event` filled, 0 when
/// the wait ended without one (timeout or `pianola_seq_wake`), or a negative errno.
int pianola_seq_read(pianola_seq *seq, int timeout_ms, pianola_seq_event *event);
/// Measures again the offset between the kernel's arrival stamps (a sequencer queue's real time)
/// and CLOCK_MONOTONIC; returns it. Done at open; callable from the reading thread to follow drift.
int64_t pianola_seq_resync_clock(pianola_seq *seq);

/// Makes a waiting `pianola_seq_read` return 0 (callable from any thread).
void pianola_seq_wake(pianola_seq *seq);

typedef struct {
    int client, port;
    char client_name[64];
    char port_name[64];
    unsigned int capability;       ///< SND_SEQ_PORT_CAP_* bits
    unsigned int type;             ///< SND_SEQ_PORT_TYPE_* bits
    int is_kernel_client;
} pianola_seq_port_info;

enum {
    PIANOLA_SEQ_CAP_READ = 1 << 0,       ///< can be read from (a source)
    PIANOLA_SEQ_CAP_WRITE = 1 << 1,
    PIANOLA_SEQ_CAP_SUBS_READ = 1 << 5,
    PIANOLA_SEQ_CAP_SUBS_WRITE = 1 << 6,
    PIANOLA_SEQ_CAP_NO_EXPORT = 1 << 7,
};

/// Fills up to `capacity` entries with every port of every client; returns how many exist (which
/// may exceed `capacity`) or a negative errno.
int pianola_seq_list_ports(pianola_seq *seq, pianola_seq_port_info *ports, int capacity);
/// One port's information; 0 or a negative errno.
int pianola_seq_port_info_of(pianola_seq *seq, int client, int port, pianola_seq_port_info *info);

// --- The output side (ALSASequencerOutput) ---------------------------------------------------------

/// Opens the sequencer (non-blocking) as client `client_name` with one port `port_name` that others
/// can read from and subscribe to, and a queue of its own running in real time, ticking at
/// `timer_hz` (0: the kernel's default, 1000 Hz; at most 6250) on which events are scheduled.
/// Announcements (ports and clients coming and going, subscriptions) are read with
/// `pianola_seq_read`. Returns 0 or a negative errno; `*out` is set on success.
int pianola_seq_open_output(const char *client_name, const char *port_name, int timer_hz, pianola_seq **out);
/// Subscribes a destination port to our port (our events go to it) / removes that subscription.
int pianola_seq_connect_to(pianola_seq *seq, int client, int port);
int pianola_seq_disconnect_to(pianola_seq *seq, int client, int port);
/// Queues one MIDI message (complete, with its status byte; SysEx with F0 and F7) from our port to
/// (client, port), or with `client` < 0 to every subscriber of our port. `time_ns` > 0: scheduled on
/// our queue for that CLOCK_MONOTONIC time (delivered by the kernel then; at once when it is past);
/// 0: delivered at once. Waits (up to 200 ms) while the kernel's pool is full. The message leaves
/// with the next `pianola_seq_drain`. Returns 0 or a negative errno (-EINVAL: not a message).
int pianola_seq_send(pianola_seq *seq, const unsigned char *bytes, int length, uint64_t time_ns,
                     int client, int port);
/// Hands what `pianola_seq_send` queued to the kernel; 0 or a negative errno.
int pianola_seq_drain(pianola_seq *seq);
/// Removes the events still scheduled on our queue (not yet delivered) but Note Offs; 0 or a
/// negative errno.
int pianola_seq_drop_scheduled(pianola_seq *seq);
/// CLOCK_MONOTONIC of the last event scheduled (0 before any): when the kernel will have
/// delivered everything sent.
uint64_t pianola_seq_last_scheduled(const pianola_seq *seq);

/// alsa-lib's text for an error code.
const char *pianola_seq_strerror(int code);

#endif
