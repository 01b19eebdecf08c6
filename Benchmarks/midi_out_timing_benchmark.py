#!/usr/bin/env python3
"""MIDI out timing: `pianola play --midi-out` beside `aplaymidi`, into the same kind of ALSA
sequencer port, in the qemu VM (a real kernel's sequencer; scripts/vm), in one run.

Run from the repository root:

    python3 Benchmarks/midi_out_timing_benchmark.py [--rounds N] [--no-build]

The song is the device tests' (Tests/Device/midi_out_checks.py): 201 events on three channels
through two tempo changes (120, 90, 150 BPM), its schedule computed from the ticks. In each round,
in the same boot, a destination (Tests/Device/MIDIMonitor: a client whose port the kernel stamps
on delivery, on its own queue's real time) gets the song from `pianola play --midi-out DEST
--midi-out-only` (sound device: snd-dummy, paced by a high-resolution timer, 48 kHz, 1024 x 3
frames), then from `aplaymidi -p DEST` (which schedules every event on its queue in ticks with the
song's tempo). For each player, receive time minus schedule, less its median (the latency), is
the timing error; the table gives its 95th percentile, its worst, max - min and the share of
events within 1 ms, per round and pooled. Rounds alternate the players' order.

The VM is emulated in software (TCG, several times slower than the host): now and then it
stalls for milliseconds, and an event due then arrives late, for either player; the pooled
percentiles are what to compare, the worst values say how often stalls hit. Nothing else should
run on the host meanwhile.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Device"))
from midi_out_checks import match, read_log, write_midi_out_song  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

GUEST = r"""
out="$1"; pianola="$2"; monitor="$3"; song="$4"; font="$5"; rounds="$6"
run_monitor() {
    "$monitor" "$1" "$2" 60 2> "$2.err" &
    monitor_pid=$!
    for _ in $(seq 100); do grep -q ready "$2.err" 2>/dev/null && break; sleep 0.1; done
}
pianola_round() {
    run_monitor "Synth P$1" "$out/pianola-$1.log"
    "$pianola" play "$song" --soundfont "$font" --device hw:Dummy,0,0 --rate 48000 --period 1024 \
        --periods 3 --midi-out "Synth P$1" --midi-out-only -q 2> "$out/pianola-$1.err"
    sleep 0.3; kill -TERM "$monitor_pid"; wait "$monitor_pid"
}
aplaymidi_round() {
    run_monitor "Synth A$1" "$out/aplaymidi-$1.log"
    aplaymidi -p "Synth A$1" "$song" 2> "$out/aplaymidi-$1.err"
    sleep 0.3; kill -TERM "$monitor_pid"; wait "$monitor_pid"
}
for round in $(seq "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then pianola_round "$round"; aplaymidi_round "$round"
    else aplaymidi_round "$round"; pianola_round "$round"; fi
done
"""


def errors(schedule, path):
    """Receive - schedule less its median, in ms, per event (None if events are missing)."""
    pairs, missing = match(schedule, read_log(path))
    if missing or not pairs:
        return None
    offsets = sorted(received - scheduled for scheduled, received, _ in pairs)
    median = offsets[len(offsets) // 2]
    return [(value - median) * 1000 for value in offsets]


def figures(values):
    distances = sorted(abs(value) for value in values)
    return {
        "p95": distances[int(0.95 * (len(distances) - 1))],
        "worst": distances[-1],
        "spread": max(values) - min(values),
        "within": sum(1 for value in distances if value <= 1.0) / len(distances) * 100,
        "count": len(values),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--no-build", action="store_true")
    arguments = parser.parse_args()
    os.chdir(ROOT)
    if not arguments.no_build:
        for product in ("pianola", "midi-monitor"):
            subprocess.run(["swift", "build", "--product", product], check=True, stdout=subprocess.DEVNULL)
    bin_path = subprocess.run(["swift", "build", "--show-bin-path"], check=True, stdout=subprocess.PIPE,
                              text=True).stdout.strip()
    with temporary_folder("midi-out-bench") as directory:
        song = os.path.join(directory, "song.mid")
        schedule = write_midi_out_song(song)
        script = os.path.join(directory, "guest.sh")
        with open(script, "w") as file:
            file.write(GUEST)
        vm = subprocess.run(
            [os.path.join(ROOT, "scripts", "vm"), "--out", directory, "--", "sh", script, directory,
             os.path.join(bin_path, "pianola"), os.path.join(bin_path, "midi-monitor"), song,
             os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"), str(arguments.rounds)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if vm.returncode != 0:
            print(vm.stdout[-2000:])
            return 1
        pooled = {"pianola": [], "aplaymidi": []}
        print("| round | player | 95th percentile | worst | max - min | within 1 ms |")
        print("|---|---|---:|---:|---:|---:|")
        for round_number in range(1, arguments.rounds + 1):
            for player in ("pianola", "aplaymidi"):
                values = errors(schedule, os.path.join(directory, f"{player}-{round_number}.log"))
                if values is None:
                    print(f"| {round_number} | {player} | events missing | | | |")
                    continue
                pooled[player] += values
                f = figures(values)
                print(f"| {round_number} | {player} | {f['p95']:.3f} ms | {f['worst']:.3f} ms | {f['spread']:.3f} ms"
                      f" | {f['within']:.1f} % |")
        if pooled["pianola"] and pooled["aplaymidi"]:
            ours, theirs = figures(pooled["pianola"]), figures(pooled["aplaymidi"])
            for name, f in (("pianola", ours), ("aplaymidi", theirs)):
                print(f"| all | {name} | {f['p95']:.3f} ms | {f['worst']:.3f} ms | {f['spread']:.3f} ms"
                      f" | {f['within']:.1f} % |")
            print(f"pianola / aplaymidi: 95th percentile {ours['p95'] / theirs['p95']:.2f}x,"
                  f" max - min {ours['spread'] / theirs['spread']:.2f}x ({ours['count']} and {theirs['count']} events)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
