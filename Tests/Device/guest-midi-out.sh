#!/bin/sh
# Runs inside the VM (scripts/vm), called by guest-tests.sh: `pianola play --midi-out` into ALSA
# sequencer destinations of a real kernel. Each destination is a midi-monitor (Tests/Device/
# MIDIMonitor), which logs what it receives with the kernel's receive time.
#   guest-midi-out.sh OUT PIANOLA MONITOR SONG FONT [TEST-KEYBOARD]
# Each scenario leaves OUT/out-NAME.err, .status and the monitors' logs (OUT/out-NAME*.log);
# Tests/Device/midi_out_checks.py checks them on the host.
out="$1"
pianola="$2"
monitor="$3"
song="$4"
font="$5"
keyboard="$6"
# Paced by a high-resolution timer (snd-dummy); a buffer an emulated machine does not underrun.
device="--device hw:Dummy,0,0 --rate 48000 --period 1024 --periods 3"

# monitor NAME LOG SECONDS: a destination, in the background (its pid in $!), ready when it says so.
start_monitor() {
    "$monitor" "$1" "$2" "$3" 2> "$2.err" &
    for _ in $(seq 100); do
        grep -q ready "$2.err" 2>/dev/null && break
        sleep 0.1
    done
}

# play NAME [options]: pianola play in the background (play_pid), with a watchdog.
play() {
    name="$1"
    shift
    "$pianola" play "$song" --soundfont "$font" $device "$@" > "$out/out-$name.out" 2> "$out/out-$name.err" &
    play_pid=$!
    (sleep 120 && kill -9 "$play_pid" 2>/dev/null) &
    watchdog=$!
}
finish() {
    wait "$play_pid"
    echo $? > "$out/out-$1.status"
    kill "$watchdog" 2>/dev/null
}

# 1. Timing: the song (with tempo changes) to one destination, the sampler silent.
start_monitor "Synth A" "$out/out-timing.log" 60
monitor_pid=$!
play timing --midi-out "Synth A" --midi-out-only
finish timing
sleep 0.3
kill -TERM "$monitor_pid"; wait "$monitor_pid"

# 2. The reference: aplaymidi plays the same song into the same kind of port.
start_monitor "Synth B" "$out/out-aplaymidi.log" 60
monitor_pid=$!
aplaymidi -p "Synth B" "$song" > "$out/out-aplaymidi.err" 2>&1
echo $? > "$out/out-aplaymidi.status"
sleep 0.3
kill -TERM "$monitor_pid"; wait "$monitor_pid"

# 3. A seek while playing (→ on a terminal: script(1) gives pianola a pseudo-terminal), then q.
start_monitor "Synth C" "$out/out-seek.log" 60
monitor_pid=$!
begin=$(date +%s.%N)
# The key goes once the song has played a second (the status line says so).
(for _ in $(seq 600); do grep -q '0:01\.' "$out/out-seek.err" 2>/dev/null && break; sleep 0.1; done
 printf '\033[C'; sleep 0.5; printf q) | \
    script -q -e -c "'$pianola' play '$song' --soundfont '$font' $device --midi-out 'Synth C' --midi-out-only" \
    /dev/null > "$out/out-seek.err" 2>&1
echo $? > "$out/out-seek.status"
sleep 0.3
kill -TERM "$monitor_pid"; wait "$monitor_pid"

# 4. SIGTERM while playing (looping): every destination reset.
start_monitor "Synth D" "$out/out-kill.log" 60
monitor_pid=$!
play kill --midi-out "Synth D" --midi-out-only --loop
# Once it plays (the destination's first message: an emulated machine may take seconds to start;
# into a file pianola prints no progress), two seconds of the song, then the signal.
for _ in $(seq 600); do
    [ -s "$out/out-kill.log" ] && break
    sleep 0.1
done
sleep 2
kill -TERM "$play_pid"
finish kill
sleep 0.3
kill -TERM "$monitor_pid"; wait "$monitor_pid"

# 5. A destination that goes away while playing (its client exits two seconds into the song); the other gets the
#    whole song. Channel 10 routed to a third.
start_monitor "Synth E1" "$out/out-gone-1.log" 60
first=$!
start_monitor "Synth E2" "$out/out-gone-2.log" 60
second=$!
start_monitor "Synth E3" "$out/out-gone-3.log" 60
third=$!
play gone --midi-out "Synth E1" --midi-out "Synth E2" --route "10:Synth E3"
for _ in $(seq 600); do [ -s "$out/out-gone-2.log" ] && break; sleep 0.1; done
sleep 2
kill -TERM "$first"
finish gone
sleep 0.3
kill -TERM "$second" "$third"; wait "$first" "$second" "$third"

# 6. A name that matches no destination (a typo of one that exists): one line with the near match.
start_monitor "Synth F" "$out/out-unknown.log" 60
monitor_pid=$!
"$pianola" play "$song" --soundfont "$font" $device --midi-out "Synht F" > "$out/out-unknown.out" \
    2> "$out/out-unknown.err"
echo $? > "$out/out-unknown.status"
kill -TERM "$monitor_pid"; wait "$monitor_pid"

# 7. live --thru: a test keyboard (OUT/keys.txt) into pianola live, forwarded at once to a destination.
if [ -n "$keyboard" ]; then
    start_monitor "Synth T" "$out/out-thru.log" 60
    monitor_pid=$!
    "$keyboard" "Thru Keyboard" "$out/keys.txt" "$out/out-thru.sent" 2> "$out/out-thru.keyboard" &
    keyboard_pid=$!
    sleep 0.5
    "$pianola" live --soundfont "$font" $device --connect "Thru Keyboard" --thru "Synth T" \
        > "$out/out-thru.out" 2> "$out/out-thru.err" &
    live_pid=$!
    (sleep 120 && kill -9 "$live_pid" 2>/dev/null) &
    watchdog=$!
    wait "$keyboard_pid"
    sleep 0.5
    kill -TERM "$live_pid"
    wait "$live_pid"
    echo $? > "$out/out-thru.status"
    kill "$watchdog" 2>/dev/null
    sleep 0.3
    kill -TERM "$monitor_pid"; wait "$monitor_pid"

    # 8. live --autoconnect --thru: the thru port is a source too, and must not be taken as one
    #    (what it sends would come back in, without end).
    start_monitor "Synth U" "$out/out-thru-auto.log" 60
    monitor_pid=$!
    "$pianola" live --soundfont "$font" $device --autoconnect --thru "Synth U" \
        > "$out/out-thru-auto.out" 2> "$out/out-thru-auto.err" &
    live_pid=$!
    (sleep 120 && kill -9 "$live_pid" 2>/dev/null) &
    watchdog=$!
    for _ in $(seq 300); do grep -q "MIDI thru" "$out/out-thru-auto.err" 2>/dev/null && break; sleep 0.1; done
    "$keyboard" "Auto Keyboard" "$out/keys.txt" "$out/out-thru-auto.sent" 2> "$out/out-thru-auto.keyboard"
    sleep 0.5
    kill -TERM "$live_pid"
    wait "$live_pid"
    echo $? > "$out/out-thru-auto.status"
    kill "$watchdog" 2>/dev/null
    sleep 0.3
    kill -TERM "$monitor_pid"; wait "$monitor_pid"
fi
