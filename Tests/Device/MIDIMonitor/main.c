// A MIDI instrument for the device tests: an ALSA sequencer client with one destination port
// (like a synthesizer's) that logs every event it receives with the kernel's receive time.
//
//   midi-monitor NAME LOG SECONDS
//
// The client is named NAME, its port "in". Each event is stamped by the kernel on delivery with
// the real time of a queue of the monitor's own; LOG gets one line per MIDI message,
// "RECEIVE-NS HEX-BYTES...", RECEIVE-NS on CLOCK_MONOTONIC (the queue's real time plus the offset
// between the two clocks, measured at start). It exits after SECONDS (the port goes away then:
// a destination that disappears) or on SIGTERM/SIGINT.
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t stopping = 0;
static void on_signal(int signal_number) { (void)signal_number; stopping = 1; }

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: midi-monitor NAME LOG SECONDS\n");
        return 2;
    }
    snd_seq_t *seq;
    int result = snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK);
    if (result < 0) {
        fprintf(stderr, "midi-monitor: snd_seq_open: %s\n", snd_strerror(result));
        return 1;
    }
    snd_seq_set_client_name(seq, argv[1]);
    int queue = snd_seq_alloc_named_queue(seq, "monitor clock");
    snd_seq_port_info_t *info;
    snd_seq_port_info_alloca(&info);
    snd_seq_port_info_set_name(info, "in");
    snd_seq_port_info_set_capability(info, SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE);
    snd_seq_port_info_set_type(info, SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_SYNTHESIZER);
    snd_seq_port_info_set_timestamping(info, 1);
    snd_seq_port_info_set_timestamp_real(info, 1);
    snd_seq_port_info_set_timestamp_queue(info, queue);
    if ((result = snd_seq_create_port(seq, info)) < 0) {
        fprintf(stderr, "midi-monitor: create port: %s\n", snd_strerror(result));
        return 1;
    }
    snd_seq_start_queue(seq, queue, NULL);
    snd_seq_drain_output(seq);
    // The queue's real time against CLOCK_MONOTONIC: the tightest of a few readings.
    snd_seq_queue_status_t *status;
    snd_seq_queue_status_alloca(&status);
    long long offset = 0, best = -1;
    for (int attempt = 0; attempt < 16; attempt++) {
        long long before = now_ns();
        snd_seq_get_queue_status(seq, queue, status);
        long long after = now_ns();
        const snd_seq_real_time_t *real = snd_seq_queue_status_get_real_time(status);
        long long queue_ns = (long long)real->tv_sec * 1000000000LL + real->tv_nsec;
        if (best < 0 || after - before < best) {
            best = after - before;
            offset = before + (after - before) / 2 - queue_ns;
        }
    }
    FILE *log = fopen(argv[2], "w");
    if (!log) {
        fprintf(stderr, "midi-monitor: cannot write %s\n", argv[2]);
        return 1;
    }
    snd_midi_event_t *decoder;
    snd_midi_event_new(4096, &decoder);
    snd_midi_event_no_status(decoder, 1);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    fprintf(stderr, "midi-monitor: %s ready at %d:%d\n", argv[1], snd_seq_client_id(seq), 0);
    long long end = now_ns() + (long long)(atof(argv[3]) * 1e9);
    unsigned char bytes[4096];
    while (!stopping && now_ns() < end) {
        snd_seq_event_t *ev = NULL;
        result = snd_seq_event_input(seq, &ev);
        if (result == -EAGAIN) {
            struct pollfd fds[4];
            int count = snd_seq_poll_descriptors(seq, fds, 4, POLLIN);
            poll(fds, (nfds_t)count, 20);
            continue;
        }
        if (result < 0 || !ev) continue;
        long length = snd_midi_event_decode(decoder, bytes, sizeof bytes, ev);
        if (length <= 0) continue;
        long long received = offset + (long long)ev->time.time.tv_sec * 1000000000LL + ev->time.time.tv_nsec;
        fprintf(log, "%lld", received);
        for (long index = 0; index < length; index++) fprintf(log, " %02x", bytes[index]);
        fprintf(log, "\n");
        fflush(log);
    }
    fclose(log);
    snd_seq_close(seq);
    return 0;
}
