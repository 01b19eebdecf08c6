#!/bin/sh
# Runs inside the VM (scripts/vm): plays into snd-aloop's loopback card and captures its other end;
# plays a test keyboard (an ALSA sequencer client) into pianola live.
#   guest-tests.sh OUT PIANOLA MIDI SOUNDFONT [TEST-KEYBOARD [LIVE-KEYBOARD-EXAMPLE [SEQUENCER-PROBE
#       [MIDI-MONITOR]]]]
# Each scenario leaves OUT/NAME.out, .err, .status (exit status), .elapsed (seconds) and, where
# audio is captured, OUT/NAME.raw (interleaved float32 at 44.1 kHz from hw:Loopback,1,0; stereo but
# for quad, which has four channels).
# Tests/Device/device_tests.py checks the results on the host.
out="$1"
pianola="$2"
midi="$3"
font="$4"
playback=hw:Loopback,0,0
capture=hw:Loopback,1,0
paced=hw:Dummy,0,0

now() { date +%s.%N; }
scratch="$(mktemp -d --tmpdir pianola-guest-XXXXXX)"  # in the guest's own temporary directory
trap 'rm -rf "$scratch"' EXIT

# start_capture NAME [CHANNELS]: records the loopback's other end (stereo unless CHANNELS).
start_capture() {
    arecord -q -D "$capture" -t raw -f FLOAT_LE -c "${2:-2}" -r 44100 "$scratch/$1.raw" &
    capture_pid=$!
    sleep 0.5
}

stop_capture() {
    sleep 0.3
    kill -INT "$capture_pid"
    wait "$capture_pid"
    cp "$scratch/$1.raw" "$out/$1.raw"
}

# play NAME DEVICE PERIOD PERIODS [extra options]: pianola play in the background; sets play_pid.
play() {
    name="$1" device="$2" period="$3" periods="$4"
    shift 4
    begin=$(now)
    "$pianola" play "$midi" --soundfont "$font" --device "$device" \
        --period "$period" --periods "$periods" "$@" > "$out/$name.out" 2> "$out/$name.err" &
    play_pid=$!
    # A watchdog: a player that hangs is stopped after two minutes (and the check fails).
    (sleep 120 && kill -9 "$play_pid" 2>/dev/null) &
    watchdog=$!
}

finish() {
    wait "$play_pid"
    echo $? > "$out/$1.status"
    kill "$watchdog" 2>/dev/null
    echo "$begin $(now)" | awk '{ printf "%.3f\n", $2 - $1 }' > "$out/$1.elapsed"
}

# 1. The stream through the loopback, captured at its other end. 1024 × 3 frames: snd-aloop is
#    paced by the kernel's 4 ms tick, and under software emulation even aplay underruns there at
#    256 × 2 (hundreds of times in a few seconds) and sometimes at 512 × 2; the player renders a
#    period only once the device has room for it (the buffer is the latency), so a third period
#    keeps a stall of the emulated machine from becoming an underrun.
start_capture stream
play stream "$playback" 1024 3
finish stream
stop_capture stream

# 1b. Four channels through the loopback: the song's channel 1 routed to outputs 3-4
#     (--channel-map), outputs 1-2 carrying the (empty) mix.
start_capture quad 4
play quad "$playback" 1024 3 --channel-map 1:3-4
finish quad
stop_capture quad

# 2. Paced by a high-resolution timer (snd-dummy) at 256 × 2, as a live player would use.
play paced "$paced" 256 2
finish paced

# 3. Underruns: the player is stopped (SIGSTOP) for half a second mid-song, so the device runs dry;
#    it must count the underrun, recover and play the rest of the song.
start_capture xrun
play xrun "$playback" 1024 2
# Once it plays (its "Device:" line: into a file pianola prints no progress), let a second and
# a half of the song go by, then freeze it.
for _ in $(seq 300); do
    grep -q "^Device: " "$out/xrun.err" 2>/dev/null && break
    sleep 0.1
done
sleep 1.5
kill -STOP "$play_pid"
sleep 0.5
kill -CONT "$play_pid"
finish xrun
stop_capture xrun

# 4. A busy device: another program holds the playback substream.
aplay -q -D "$playback" -t raw -f FLOAT_LE -c 2 -r 44100 /dev/zero 2>/dev/null &
holder=$!
sleep 0.5
play busy "$playback" 256 2
finish busy
kill "$holder"
wait "$holder" 2>/dev/null

# 5. A rate the device cannot take: the loopback's capture end already runs at 44.1 kHz, which
#    fixes the playback end's rate.
start_capture rate
play rate "$playback" 256 2 --rate 48000
finish rate
stop_capture rate

# 6. The device goes away while playing: snd-dummy's platform device is unbound from its driver,
#    which disconnects the card as unplugging a USB card does. The player must stop with one line.
play lost "$paced" 1024 2 --loop
for _ in $(seq 300); do
    grep -q "^Device: " "$out/lost.err" 2>/dev/null && break
    sleep 0.1
done
sleep 1
# The unbind waits until the device is closed: in the background.
echo snd_dummy.0 > /sys/bus/platform/drivers/snd_dummy/unbind &
unbind=$!
finish lost
wait "$unbind"
# Plugged in again, for the tests below.
echo snd_dummy.0 > /sys/bus/platform/drivers/snd_dummy/bind
sleep 0.5

# --- Live input (pianola live) -------------------------------------------------------------------
# Needs the test keyboard (an ALSA sequencer client that plays a script and logs what it sent when)
# and its scripts, in OUT: keys.txt.
keyboard="$5"
live() {
    name="$1"
    shift
    # --delay 50: under software emulation, on a busy host, threads can wake up tens of
    # milliseconds after the kernel stamped an event; a real machine needs far less (the default
    # is 1 ms).
    "$pianola" live --soundfont "$font" --device "$playback" --period 1024 --periods 3 --delay 50 \
        --record "$out/$name.mid" "$@" > "$out/$name.out" 2> "$out/$name.err" &
    live_pid=$!
    (sleep 120 && kill -9 "$live_pid" 2>/dev/null) &
    watchdog=$!
    # Ready once it reports its sequencer port.
    for _ in $(seq 300); do
        grep -q "MIDI input" "$out/$name.err" 2>/dev/null && break
        sleep 0.1
    done
}
stop_live() {
    sleep 0.5
    kill -TERM "$live_pid"
    wait "$live_pid"
    echo $? > "$out/$1.status"
    kill "$watchdog" 2>/dev/null
}

if [ -n "$keyboard" ]; then
    # 7. Autoconnect: a keyboard appears after pianola started, plays, goes away, comes back.
    start_capture autoconnect
    live autoconnect --autoconnect --latency-report "$out/autoconnect.latency.json"
    "$keyboard" "Test Keyboard" "$out/keys.txt" "$out/autoconnect.sent1" 2> "$out/autoconnect.keyboard"
    sleep 1
    "$keyboard" "Test Keyboard" "$out/keys.txt" "$out/autoconnect.sent2" 2>> "$out/autoconnect.keyboard"
    stop_live autoconnect
    stop_capture autoconnect

    # 8. --connect by name: the keyboard is there first; it goes away and comes back under the same
    #    name (a new client number), and is connected again.
    "$keyboard" "Named Keyboard" "$out/keys.txt" "$out/connect.sent1" 2> "$out/connect.keyboard" &
    first=$!
    sleep 0.5
    "$pianola" devices --json > "$out/devices.json" 2> "$out/devices.err"
    live connect --connect "Named Keyboard"
    wait "$first"
    sleep 1
    "$keyboard" "Named Keyboard" "$out/keys.txt" "$out/connect.sent2" 2>> "$out/connect.keyboard"
    stop_live connect

    # 9. The library example (Examples/LiveKeyboard) with a keyboard that appears after it started.
    example="$6"
    if [ -n "$example" ]; then
        (cd "$out" && "$example" auto 6 "$playback" "$font" > "$out/example.out" 2> "$out/example.err"; echo $? > "$out/example.status") &
        example_job=$!
        sleep 1
        "$keyboard" "Example Keyboard" "$out/keys.txt" "$out/example.sent" 2> "$out/example.keyboard"
        wait "$example_job"
    fi

    # 10. Latency by the output's own account, at 48 kHz and 256 × 2 into snd-dummy (paced by a
    #    high-resolution timer), with the default delay: 200 notes from the test keyboard.
    "$pianola" live --soundfont "$font" --device "$paced" --rate 48000 --period 256 --periods 2 \
        --autoconnect --latency-report "$out/latency.json" > "$out/latency.out" 2> "$out/latency.err" &
    live_pid=$!
    for _ in $(seq 300); do
        grep -q "MIDI input" "$out/latency.err" 2>/dev/null && break
        sleep 0.1
    done
    "$keyboard" "Latency Keyboard" "$out/latency-keys.txt" "$out/latency.sent" 2> "$out/latency.keyboard"
    stop_live latency

    # 11. A source that does not exist: one line, non-zero exit.
    "$pianola" live --soundfont "$font" --device "$playback" --connect "No Such Keyboard" \
        > "$out/unknown.out" 2> "$out/unknown.err"
    echo $? > "$out/unknown.status"

    # 12. Subscriptions that fail are reported by the library (ALSASequencerInput's events and
    #     Source.failure), read through a small probe rather than the CLI's wording: a source that
    #     refuses subscriptions when the input starts, and a named source that plays, goes away
    #     and comes back refusing them.
    probe="$7"
    if [ -n "$probe" ]; then
        "$keyboard" "Locked Keyboard" "$out/keys.txt" "$out/locked.sent" --wait-subscriber 4 --locked \
            2> "$out/locked.keyboard" &
        locked=$!
        sleep 0.5
        "$probe" 2 "Locked Keyboard" > "$out/probe-start.out" 2> "$out/probe-start.err"
        echo $? > "$out/probe-start.status"
        wait "$locked"

        "$probe" 15 "Flaky Keyboard" > "$out/probe-reconnect.out" 2> "$out/probe-reconnect.err" &
        probe_pid=$!
        sleep 1
        "$keyboard" "Flaky Keyboard" "$out/keys.txt" "$out/flaky.sent" 2> "$out/flaky.keyboard"
        sleep 0.5
        "$keyboard" "Flaky Keyboard" "$out/keys.txt" "$out/flaky-locked.sent" --wait-subscriber 3 --locked \
            2>> "$out/flaky.keyboard"
        wait "$probe_pid"
        echo $? > "$out/probe-reconnect.status"
    fi
fi

# --- Audio in (pianola record), last: the live tests above keep the conditions they were tuned in.
# See guest-record.sh.
sh "$(dirname "$0")/guest-record.sh" "$out" "$pianola"

# --- MIDI out (pianola play --midi-out) into sequencer destinations: see guest-midi-out.sh. The
#     song (with tempo changes) is OUT/midi-out.mid, written by the host.
midi_monitor="$8"
if [ -n "$midi_monitor" ]; then
    sh "$(dirname "$0")/guest-midi-out.sh" "$out" "$pianola" "$midi_monitor" "$out/midi-out.mid" "$font" \
        "$keyboard"
fi
