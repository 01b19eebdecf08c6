// A MIDI keyboard for the device tests: an ALSA sequencer client with one source port (like a
// USB keyboard's) that plays a script of MIDI messages at given times and logs when it sent each.
//
//   test-keyboard NAME SCRIPT LOG [--wait-subscriber SECONDS] [--locked]
//
// SCRIPT: one message per line, "MILLISECONDS HEX-BYTES...", times from the first message (e.g.
// "500 90 3c 64"); SysEx as "F0 ... F7". The client is named NAME, its port "Keys". It waits until
// something subscribes to the port (default: up to 20 s), then sends each message directly to the
// subscribers at its time (CLOCK_MONOTONIC, absolute sleeps) and writes
// "BEFORE AFTER QUEUE-BEFORE QUEUE-AFTER HEX-BYTES" per message to LOG: CLOCK_MONOTONIC and the real
// time of Pianola's arrival-clock queue (-1 if absent) just before and just after sending it, in
// nanoseconds. It exits when the script ends: the keyboard goes away. With --locked its port is
// readable but refuses subscriptions (no SUBS_READ), as a port of another program's may: nobody
// can subscribe, and it exits (1) when the wait for a subscriber ends.
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// The real time of a sequencer queue in nanoseconds, or -1 when it cannot be read.
static long long queue_ns(snd_seq_t *seq, int queue, snd_seq_queue_status_t *status) {
    if (queue < 0 || snd_seq_get_queue_status(seq, queue, status) < 0) return -1;
    const snd_seq_real_time_t *real = snd_seq_queue_status_get_real_time(status);
    return (long long)real->tv_sec * 1000000000 + real->tv_nsec;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t ns) {
    struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {}
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: test-keyboard NAME SCRIPT LOG [--wait-subscriber SECONDS] [--locked]\n");
        return 2;
    }
    double wait_seconds = 20;
    int locked = 0;
    for (int index = 4; index < argc; index++) {
        if (strcmp(argv[index], "--wait-subscriber") == 0 && index + 1 < argc) {
            wait_seconds = atof(argv[++index]);
        } else if (strcmp(argv[index], "--locked") == 0) {
            locked = 1;
        }
    }
    snd_seq_t *seq;
    int result = snd_seq_open(&seq, "default", SND_SEQ_OPEN_OUTPUT, 0);
    if (result < 0) {
        fprintf(stderr, "test-keyboard: snd_seq_open: %s\n", snd_strerror(result));
        return 1;
    }
    snd_seq_set_client_name(seq, argv[1]);
    unsigned capabilities = SND_SEQ_PORT_CAP_READ | (locked ? 0 : SND_SEQ_PORT_CAP_SUBS_READ);
    int port = snd_seq_create_simple_port(seq, "Keys", capabilities,
        SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_HARDWARE | SND_SEQ_PORT_TYPE_PORT);
    if (port < 0) {
        fprintf(stderr, "test-keyboard: create port: %s\n", snd_strerror(port));
        return 1;
    }
    FILE *script = fopen(argv[2], "r");
    FILE *log = fopen(argv[3], "w");
    if (!script || !log) {
        fprintf(stderr, "test-keyboard: cannot open the script or the log\n");
        return 1;
    }

    // Wait for a subscriber (Pianola connecting to us).
    snd_seq_query_subscribe_t *query;
    snd_seq_query_subscribe_alloca(&query);
    snd_seq_addr_t root = {.client = (unsigned char)snd_seq_client_id(seq), .port = (unsigned char)port};
    snd_seq_query_subscribe_set_root(query, &root);
    snd_seq_query_subscribe_set_type(query, SND_SEQ_QUERY_SUBS_READ);
    uint64_t deadline = now_ns() + (uint64_t)(wait_seconds * 1e9);
    for (;;) {
        snd_seq_query_subscribe_set_index(query, 0);
        if (snd_seq_query_port_subscribers(seq, query) >= 0) break;
        if (now_ns() > deadline) {
            fprintf(stderr, "test-keyboard: nobody subscribed to %s:Keys\n", argv[1]);
            return 1;
        }
        sleep_until(now_ns() + 10000000u);
    }
    sleep_until(now_ns() + 200000000u);  // let the subscriber settle

    // Pianola's arrival clock (the queue its port stamps events on): each send is also logged on
    // that clock, the one the recording's times come from.
    int queue = snd_seq_query_named_queue(seq, "Pianola arrival clock");
    snd_seq_queue_status_t *status;
    snd_seq_queue_status_alloca(&status);

    snd_midi_event_t *encoder;
    snd_midi_event_new(4096, &encoder);
    char line[16384];
    uint64_t start = now_ns() + 100000000u;
    while (fgets(line, sizeof line, script)) {
        char *cursor = line;
        double ms = strtod(cursor, &cursor);
        unsigned char bytes[4096];
        int count = 0;
        for (;;) {
            char *end;
            long value = strtol(cursor, &end, 16);
            if (end == cursor || count >= (int)sizeof bytes) break;
            bytes[count++] = (unsigned char)value;
            cursor = end;
        }
        if (count == 0) continue;
        sleep_until(start + (uint64_t)(ms * 1e6));
        uint64_t before = now_ns();
        long long queue_before = queue_ns(seq, queue, status);
        snd_midi_event_reset_encode(encoder);
        for (int index = 0; index < count; index++) {
            snd_seq_event_t ev;
            snd_seq_ev_clear(&ev);
            if (snd_midi_event_encode_byte(encoder, bytes[index], &ev) == 1) {
                snd_seq_ev_set_source(&ev, port);
                snd_seq_ev_set_subs(&ev);
                snd_seq_ev_set_direct(&ev);
                snd_seq_event_output_direct(seq, &ev);
            }
        }
        // The message was sent during the calls above: log that span.
        long long queue_after = queue_ns(seq, queue, status);
        uint64_t after = now_ns();
        fprintf(log, "%llu %llu %lld %lld", (unsigned long long)before, (unsigned long long)after, queue_before,
                queue_after);
        for (int index = 0; index < count; index++) fprintf(log, " %02x", bytes[index]);
        fprintf(log, "\n");
    }
    fclose(log);
    sleep_until(now_ns() + 200000000u);
    snd_seq_close(seq);
    return 0;
}
