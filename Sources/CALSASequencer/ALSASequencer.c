#define _GNU_SOURCE
#include "CALSASequencer.h"

#include <alsa/asoundlib.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct pianola_seq {
    snd_seq_t *handle;
    int port;
    int queue;
    /// CLOCK_MONOTONIC at the queue's time zero: kernel arrival stamps + this = MIDITimestamp.
    int64_t queue_epoch_ns;
    int calibrated;
    int wake[2];
    snd_midi_event_t *decoder;
    snd_midi_event_t *encoder;
    uint64_t last_scheduled_ns;
    unsigned char buffer[65536];
};

static void silent_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// Opens a client with one port and a real-time queue: an input port stamped by the queue, or
/// an output port whose events are scheduled on it.
static int open_client(const char *client_name, const char *port_name, int output, int timer_hz, pianola_seq **out) {
    snd_lib_error_set_handler(silent_error_handler);
    pianola_seq *seq = calloc(1, sizeof *seq);
    if (!seq) return -ENOMEM;
    seq->wake[0] = seq->wake[1] = -1;
    int result = snd_seq_open(&seq->handle, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK);
    if (result < 0) { free(seq); return result; }
    snd_seq_set_client_name(seq->handle, client_name);
    // Input: the kernel stamps every event with its arrival time on a queue of ours (real time),
    // so the stamp does not depend on when our thread wakes up. Output: events are scheduled on it.
    seq->queue = snd_seq_alloc_named_queue(seq->handle, output ? "Pianola output clock" : "Pianola arrival clock");
    if (seq->queue < 0) { result = seq->queue; goto fail; }
    if (output && timer_hz > 0) {
        // A finer tick than the default 1 ms: events leave closer to their time.
        snd_seq_queue_timer_t *timer;
        snd_seq_queue_timer_alloca(&timer);
        if (snd_seq_get_queue_timer(seq->handle, seq->queue, timer) == 0) {
            snd_seq_queue_timer_set_resolution(timer, (unsigned)timer_hz);
            snd_seq_set_queue_timer(seq->handle, seq->queue, timer);
        }
    }
    snd_seq_port_info_t *info;
    snd_seq_port_info_alloca(&info);
    snd_seq_port_info_set_name(info, port_name);
    if (output) {
        // (WRITE: the System Announce port's events come to it.)
        snd_seq_port_info_set_capability(info,
            SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ | SND_SEQ_PORT_CAP_WRITE);
        snd_seq_port_info_set_type(info, SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    } else {
        snd_seq_port_info_set_capability(info, SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE);
        snd_seq_port_info_set_type(info,
            SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_SYNTHESIZER | SND_SEQ_PORT_TYPE_APPLICATION);
        snd_seq_port_info_set_timestamping(info, 1);
        snd_seq_port_info_set_timestamp_real(info, 1);
        snd_seq_port_info_set_timestamp_queue(info, seq->queue);
    }
    result = snd_seq_create_port(seq->handle, info);
    if (result < 0) goto fail;
    seq->port = snd_seq_port_info_get_port(info);
    if (output) {
        // Room for a dense song's events scheduled a buffer ahead.
        snd_seq_set_client_pool_output(seq->handle, 2000);
        snd_seq_set_output_buffer_size(seq->handle, 1 << 16);
    }
    result = snd_seq_start_queue(seq->handle, seq->queue, NULL);
    if (result < 0) goto fail;
    snd_seq_drain_output(seq->handle);
    pianola_seq_resync_clock(seq);
    // The System Announce port tells of clients and ports coming and going.
    result = snd_seq_connect_from(seq->handle, seq->port, SND_SEQ_CLIENT_SYSTEM, SND_SEQ_PORT_SYSTEM_ANNOUNCE);
    if (result < 0) goto fail;
    if (pipe2(seq->wake, O_NONBLOCK | O_CLOEXEC) < 0) { result = -errno; goto fail; }
    result = snd_midi_event_new(sizeof seq->buffer, &seq->decoder);
    if (result < 0) goto fail;
    snd_midi_event_no_status(seq->decoder, 1);
    if (output) {
        result = snd_midi_event_new(sizeof seq->buffer, &seq->encoder);
        if (result < 0) goto fail;
    }
    *out = seq;
    return 0;
fail:
    pianola_seq_close(seq);
    return result;
}

int pianola_seq_open(const char *client_name, const char *port_name, pianola_seq **out) {
    return open_client(client_name, port_name, 0, 0, out);
}

int pianola_seq_open_output(const char *client_name, const char *port_name, int timer_hz, pianola_seq **out) {
    return open_client(client_name, port_name, 1, timer_hz, out);
}

void pianola_seq_close(pianola_seq *seq) {
    if (!seq) return;
    if (seq->decoder) snd_midi_event_free(seq->decoder);
    if (seq->encoder) snd_midi_event_free(seq->encoder);
    if (seq->handle) snd_seq_close(seq->handle);
    if (seq->wake[0] >= 0) close(seq->wake[0]);
    if (seq->wake[1] >= 0) close(seq->wake[1]);
    free(seq);
}

int pianola_seq_client(const pianola_seq *seq) { return snd_seq_client_id(seq->handle); }
int pianola_seq_port(const pianola_seq *seq) { return seq->port; }

int pianola_seq_parse_address(pianola_seq *seq, const char *text, int *client, int *port) {
    snd_seq_addr_t address;
    int result = snd_seq_parse_address(seq->handle, &address, text);
    if (result < 0) return result;
    *client = address.client;
    *port = address.port;
    return 0;
}

int pianola_seq_connect_from(pianola_seq *seq, int client, int port) {
    return snd_seq_connect_from(seq->handle, seq->port, client, port);
}

int pianola_seq_disconnect_from(pianola_seq *seq, int client, int port) {
    return snd_seq_disconnect_from(seq->handle, seq->port, client, port);
}

static uint64_t now_ns(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

int64_t pianola_seq_resync_clock(pianola_seq *seq) {
    snd_seq_queue_status_t *status;
    snd_seq_queue_status_alloca(&status);
    uint64_t best_span = UINT64_MAX;
    int64_t measured = 0;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t before = now_ns();
        if (snd_seq_get_queue_status(seq->handle, seq->queue, status) < 0) break;
        uint64_t after = now_ns();
        const snd_seq_real_time_t *real = snd_seq_queue_status_get_real_time(status);
        int64_t queue_ns = (int64_t)real->tv_sec * 1000000000 + real->tv_nsec;
        if (after - before < best_span) {
            best_span = after - before;
            measured = (int64_t)(before + (after - before) / 2) - queue_ns;
        }
    }
    if (best_span == UINT64_MAX) return seq->queue_epoch_ns;
    if (!seq->calibrated) {
        seq->queue_epoch_ns = measured;
        seq->calibrated = 1;
    } else {
        // Both clocks come from the kernel's; a new reading differs mostly by the noise of the
        // reading itself. Follow real drift, slowly: at most 50 µs per call.
        int64_t step = measured - seq->queue_epoch_ns;
        if (step > 50000) step = 50000;
        if (step < -50000) step = -50000;
        seq->queue_epoch_ns += step;
    }
    return seq->queue_epoch_ns;
}

static int fill(pianola_seq *seq, snd_seq_event_t *ev, pianola_seq_event *event) {
    memset(event, 0, sizeof *event);
    if ((ev->flags & SND_SEQ_TIME_STAMP_MASK) == SND_SEQ_TIME_STAMP_REAL && ev->queue == seq->queue) {
        event->arrival_ns = (uint64_t)(seq->queue_epoch_ns + (int64_t)ev->time.time.tv_sec * 1000000000
                                       + ev->time.time.tv_nsec);
        event->read_ns = now_ns();
    } else {
        event->arrival_ns = event->read_ns = now_ns();
    }
    event->source_client = ev->source.client;
    event->source_port = ev->source.port;
    switch (ev->type) {
    case SND_SEQ_EVENT_PORT_START:
    case SND_SEQ_EVENT_PORT_EXIT:
    case SND_SEQ_EVENT_CLIENT_START:
    case SND_SEQ_EVENT_CLIENT_EXIT:
        event->kind = ev->type == SND_SEQ_EVENT_PORT_START ? PIANOLA_SEQ_PORT_START
            : ev->type == SND_SEQ_EVENT_PORT_EXIT ? PIANOLA_SEQ_PORT_EXIT
            : ev->type == SND_SEQ_EVENT_CLIENT_START ? PIANOLA_SEQ_CLIENT_START : PIANOLA_SEQ_CLIENT_EXIT;
        event->address_client = ev->data.addr.client;
        event->address_port = ev->data.addr.port;
        return 1;
    case SND_SEQ_EVENT_PORT_SUBSCRIBED:
    case SND_SEQ_EVENT_PORT_UNSUBSCRIBED:
        event->kind = ev->type == SND_SEQ_EVENT_PORT_SUBSCRIBED ? PIANOLA_SEQ_SUBSCRIBED : PIANOLA_SEQ_UNSUBSCRIBED;
        event->address_client = ev->data.connect.sender.client;
        event->address_port = ev->data.connect.sender.port;
        event->destination_client = ev->data.connect.dest.client;
        event->destination_port = ev->data.connect.dest.port;
        return 1;
    default:
        break;
    }
    long length = snd_midi_event_decode(seq->decoder, seq->buffer, sizeof seq->buffer, ev);
    if (length > 0) {
        event->kind = PIANOLA_SEQ_MIDI;
        event->bytes = seq->buffer;
        event->length = (int)length;
    } else {
        event->kind = PIANOLA_SEQ_OTHER;
    }
    return 1;
}

int pianola_seq_read(pianola_seq *seq, int timeout_ms, pianola_seq_event *event) {
    for (;;) {
        snd_seq_event_t *ev = NULL;
        int result = snd_seq_event_input(seq->handle, &ev);
        if (result == -ENOSPC) {
            memset(event, 0, sizeof *event);
            event->kind = PIANOLA_SEQ_OVERRUN;
            event->arrival_ns = event->read_ns = now_ns();
            return 1;
        }
        if (result >= 0 && ev) return fill(seq, ev, event);
        if (result != -EAGAIN) return result;

        int count = snd_seq_poll_descriptors_count(seq->handle, POLLIN);
        if (count > 7) count = 7;
        struct pollfd fds[8];
        snd_seq_poll_descriptors(seq->handle, fds, (unsigned)count, POLLIN);
        fds[count].fd = seq->wake[0];
        fds[count].events = POLLIN;
        fds[count].revents = 0;
        int ready = poll(fds, (nfds_t)count + 1, timeout_ms);
        if (ready < 0) {
            if (errno == EINTR) return 0;
            return -errno;
        }
        if (ready == 0) return 0;
        if (fds[count].revents & POLLIN) {
            char drain[64];
            while (read(seq->wake[0], drain, sizeof drain) > 0) {}
            return 0;
        }
    }
}

void pianola_seq_wake(pianola_seq *seq) {
    char byte = 1;
    ssize_t written = write(seq->wake[1], &byte, 1);
    (void)written;
}

static void copy_info(snd_seq_client_info_t *client, snd_seq_port_info_t *port, pianola_seq_port_info *info) {
    memset(info, 0, sizeof *info);
    info->client = snd_seq_port_info_get_client(port);
    info->port = snd_seq_port_info_get_port(port);
    if (client) {
        strncpy(info->client_name, snd_seq_client_info_get_name(client), sizeof info->client_name - 1);
        info->is_kernel_client = snd_seq_client_info_get_type(client) == SND_SEQ_KERNEL_CLIENT;
    }
    strncpy(info->port_name, snd_seq_port_info_get_name(port), sizeof info->port_name - 1);
    info->capability = snd_seq_port_info_get_capability(port);
    info->type = snd_seq_port_info_get_type(port);
}

int pianola_seq_list_ports(pianola_seq *seq, pianola_seq_port_info *ports, int capacity) {
    snd_seq_client_info_t *client;
    snd_seq_port_info_t *port;
    snd_seq_client_info_alloca(&client);
    snd_seq_port_info_alloca(&port);
    snd_seq_client_info_set_client(client, -1);
    int count = 0;
    while (snd_seq_query_next_client(seq->handle, client) >= 0) {
        snd_seq_port_info_set_client(port, snd_seq_client_info_get_client(client));
        snd_seq_port_info_set_port(port, -1);
        while (snd_seq_query_next_port(seq->handle, port) >= 0) {
            if (count < capacity) copy_info(client, port, &ports[count]);
            count++;
        }
    }
    return count;
}

int pianola_seq_port_info_of(pianola_seq *seq, int client, int port, pianola_seq_port_info *info) {
    snd_seq_client_info_t *client_info;
    snd_seq_port_info_t *port_info;
    snd_seq_client_info_alloca(&client_info);
    snd_seq_port_info_alloca(&port_info);
    int result = snd_seq_get_any_port_info(seq->handle, client, port, port_info);
    if (result < 0) return result;
    result = snd_seq_get_any_client_info(seq->handle, client, client_info);
    copy_info(result < 0 ? NULL : client_info, port_info, info);
    return 0;
}

int pianola_seq_connect_to(pianola_seq *seq, int client, int port) {
    return snd_seq_connect_to(seq->handle, seq->port, client, port);
}

int pianola_seq_disconnect_to(pianola_seq *seq, int client, int port) {
    return snd_seq_disconnect_to(seq->handle, seq->port, client, port);
}

/// Waits until the sequencer takes output again (its pool or our buffer was full).
static int wait_for_room(pianola_seq *seq) {
    int count = snd_seq_poll_descriptors_count(seq->handle, POLLOUT);
    if (count > 8) count = 8;
    struct pollfd fds[8];
    snd_seq_poll_descriptors(seq->handle, fds, (unsigned)count, POLLOUT);
    int ready = poll(fds, (nfds_t)count, 200);
    return ready > 0 ? 0 : -EAGAIN;
}

int pianola_seq_send(pianola_seq *seq, const unsigned char *bytes, int length, uint64_t time_ns, int client, int port) {
    if (length <= 0) return -EINVAL;
    snd_midi_event_reset_encode(seq->encoder);
    snd_seq_event_t ev;
    snd_seq_ev_clear(&ev);
    long used = snd_midi_event_encode(seq->encoder, bytes, length, &ev);
    if (used < length || ev.type == SND_SEQ_EVENT_NONE) return -EINVAL;
    snd_seq_ev_set_source(&ev, seq->port);
    if (client < 0) {
        snd_seq_ev_set_subs(&ev);
    } else {
        snd_seq_ev_set_dest(&ev, (unsigned char)client, (unsigned char)port);
    }
    if (time_ns > 0) {
        int64_t queue_ns = (int64_t)time_ns - seq->queue_epoch_ns;
        if (queue_ns < 0) queue_ns = 0;
        snd_seq_real_time_t when = {(unsigned)(queue_ns / 1000000000), (unsigned)(queue_ns % 1000000000)};
        snd_seq_ev_schedule_real(&ev, seq->queue, 0, &when);
        if (time_ns > seq->last_scheduled_ns) seq->last_scheduled_ns = time_ns;
    } else {
        snd_seq_ev_set_direct(&ev);
    }
    for (int attempt = 0;; attempt++) {
        int result = snd_seq_event_output(seq->handle, &ev);
        if (result >= 0) return 0;
        if (result != -EAGAIN || attempt == 10) return result;
        // Our buffer is full: hand it over, and wait for the kernel's pool when that is full too.
        result = snd_seq_drain_output(seq->handle);
        if (result == -EAGAIN) wait_for_room(seq);
        else if (result < 0) return result;
    }
}

int pianola_seq_drain(pianola_seq *seq) {
    for (int attempt = 0;; attempt++) {
        int result = snd_seq_drain_output(seq->handle);
        if (result >= 0) return 0;
        if (result != -EAGAIN || attempt == 10) return result;
        wait_for_room(seq);
    }
}

int pianola_seq_drop_scheduled(pianola_seq *seq) {
    // Note Offs stay: a note whose On was already delivered is still released.
    snd_seq_remove_events_t *remove;
    snd_seq_remove_events_alloca(&remove);
    snd_seq_remove_events_set_queue(remove, seq->queue);
    snd_seq_remove_events_set_condition(remove, SND_SEQ_REMOVE_OUTPUT | SND_SEQ_REMOVE_IGNORE_OFF);
    int result = snd_seq_remove_events(seq->handle, remove);
    seq->last_scheduled_ns = 0;
    return result;
}

uint64_t pianola_seq_last_scheduled(const pianola_seq *seq) { return seq->last_scheduled_ns; }

const char *pianola_seq_strerror(int code) { return snd_strerror(code); }
