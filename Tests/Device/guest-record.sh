#!/bin/sh
# Runs inside the VM (scripts/vm), called by guest-tests.sh: `pianola record` against real ALSA
# drivers. A source played into snd-aloop's playback end (hw:Loopback,0,0) is recorded from its
# capture end (hw:Loopback,1,0); the monitor plays into hw:Loopback,0,1 and is captured from
# hw:Loopback,1,1. Tests/Device/record_checks.py checks the results on the host.
#   guest-record.sh OUT PIANOLA
# OUT holds the sources (src-RATE-CHANNELS.raw, interleaved float32) written by the host; each
# scenario leaves OUT/NAME.wav, .json (the --json summary), .err, .status and, where timed, .times.
out="$1"
pianola="$2"
source_end=hw:Loopback,0,0
capture_end=hw:Loopback,1,0
now() { date +%s.%N; }

# record NAME [options]: pianola record in the background, JSON summary on; sets record_pid once it
# records (its "Recording to" line), with a watchdog.
record() {
    name="$1"
    shift
    "$pianola" record -o "$out/$name.wav" --json "$@" > "$out/$name.json" 2> "$out/$name.err" \
        < "${record_input:-/dev/null}" &
    record_pid=$!
    (sleep 120 && kill -9 "$record_pid" 2>/dev/null) &
    watchdog=$!
    for _ in $(seq 300); do
        grep -q "Recording to" "$out/$name.err" 2>/dev/null && break
        kill -0 "$record_pid" 2>/dev/null || break
        sleep 0.1
    done
}

finish_record() {
    wait "$record_pid"
    echo $? > "$out/$1.status"
    kill "$watchdog" 2>/dev/null
}

# 1. Sample for sample, at 44.1 and 48 kHz, 1 and 2 channels, 16-bit, 24-bit and float files: the
#    recorder opens the capture end first (float), so the source is played at its parameters.
#    Six periods of buffer (128 ms): an emulated machine stalls now and then, and these scenarios
#    are about exact samples (the overrun one below provokes its overrun on purpose).
for spec in "44100 1 s16" "44100 2 f32" "48000 2 s24" "48000 1 f32"; do
    set -- $spec
    name="exact-$1-$2-$3"
    record "$name" -d "$capture_end" --rate "$1" --channels "$2" --format "$3" --duration 4 --period 1024 --periods 6 \
        --meter-log "$out/$name.meters.jsonl"
    aplay -q -D "$source_end" -t raw -f FLOAT_LE -c "$2" -r "$1" "$out/src-$1-$2.raw"
    finish_record "$name"
done

# 1b. --split: numbered parts of one second that together hold the source without a gap or an overlap.
record split -d "$capture_end" --rate 48000 --format f32 --duration 4 --split 1 --period 1024 --periods 6
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 "$out/src-48000-2.raw"
finish_record split

# 1c. Pause and resume by keys on standard input (--interactive, as `arecord -i`): space at about
#     1.2 s and 2.2 s into a 4-second source, q after it. A FIFO opened read-write here first, so
#     that neither end waits for the other.
mkfifo "$out/keys"
exec 3<> "$out/keys"
record_input="$out/keys"
record pause -d "$capture_end" --rate 48000 --format f32 --period 1024 --periods 6 --interactive
record_input=
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 "$out/src-pause.raw" &
player=$!
sleep 1.2
printf ' ' >&3
sleep 1
printf ' ' >&3
wait "$player"
printf q >&3
finish_record pause
exec 3>&-

# 2. An overrun: the recorder is stopped (SIGSTOP) for half a second while the source plays; the
#    capture buffer (3 × 1024 frames, 64 ms) overflows. It must count it, recover and go on.
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 /dev/zero 2>/dev/null &
filler=$!
record overrun -d "$capture_end" --rate 48000 --duration 5 --period 1024 --periods 3
sleep 1.5
kill -STOP "$record_pid"
sleep 0.5
kill -CONT "$record_pid"
finish_record overrun
kill "$filler"
wait "$filler" 2>/dev/null

# 3. SIGKILL after several seconds: the file is valid and holds all but (at most) the last second.
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 /dev/zero 2>/dev/null &
filler=$!
record killed -d "$capture_end" --rate 48000
begin=$(now)
sleep 4
kill -9 "$record_pid"
end=$(now)
finish_record killed
echo "$begin $end" > "$out/killed.times"
kill "$filler"
wait "$filler" 2>/dev/null

# 4. A full disk: a 300 KB tmpfs fills after about a second of 48 kHz stereo 16-bit.
small="$(mktemp -d --tmpdir pianola-full-disk-XXXXXX)"
trap 'umount "$small" 2>/dev/null; rm -rf "$small"' EXIT
mount -t tmpfs -o size=300k tmpfs "$small"
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 /dev/zero 2>/dev/null &
filler=$!
"$pianola" record -o "$small/full.wav" -d "$capture_end" --rate 48000 --duration 10 \
    > "$out/full.json" 2> "$out/full.err"
echo $? > "$out/full.status"
cp "$small/full.wav" "$out/full.wav" 2>/dev/null
kill "$filler"
wait "$filler" 2>/dev/null
umount "$small"

# 5. Full duplex with --monitor: the input through the recorder's effect chain to hw:Loopback,0,1, captured at
#    hw:Loopback,1,1 by arecord (started first, at the recorder's parameters). The wall-clock times
#    of the source's start and the monitor capture's start give a rough latency (process start-up
#    under emulation blurs it by milliseconds).
arecord -q -D hw:Loopback,1,1 -t raw -f FLOAT_LE -c 2 -r 48000 "$out/monitor.raw" &
monitor_capture=$!
monitor_begin=$(now)
record monitor -d "$capture_end" --rate 48000 --format f32 --duration 5 --period 1024 --periods 3 \
    --fx eq:type=highShelf,freq=4000,gain=-6 --monitor --monitor-device hw:Loopback,0,1
source_begin=$(now)
aplay -q -D "$source_end" -t raw -f FLOAT_LE -c 2 -r 48000 "$out/src-48000-2.raw"
finish_record monitor
sleep 0.3
kill -INT "$monitor_capture"
wait "$monitor_capture"
echo "$monitor_begin $source_begin" > "$out/monitor.times"

# 5b. The capture card goes away while recording (snd-dummy unbound, as a USB card unplugged): one
#     line, a non-zero exit, and a valid file of what came before.
record lost-input -d hw:Dummy,0,0 --rate 48000 --period 1024 --periods 3
sleep 1.5
echo snd_dummy.0 > /sys/bus/platform/drivers/snd_dummy/unbind &
unbind=$!
finish_record lost-input
wait "$unbind"
echo snd_dummy.0 > /sys/bus/platform/drivers/snd_dummy/bind
sleep 0.5

# 6. Bad input: a playback-only device, a channel count and a rate the device refuses.
bad() {
    name="$1"
    shift
    "$pianola" record -o "$out/$name.wav" --duration 1 "$@" > "$out/$name.out" 2> "$out/$name.err"
    echo $? > "$out/$name.status"
}
bad bad-playback-only -d dmix:CARD=Loopback,DEV=0
bad bad-channels -d hw:Dummy,0,0 --channels 4
bad bad-rate -d hw:Dummy,0,0 --rate 96000
"$pianola" devices --json > "$out/record-devices.json" 2> "$out/record-devices.err"
