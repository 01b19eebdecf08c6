#!/usr/bin/env python3
"""Underruns of `pianola live` under a dense input stream, in the qemu VM, against an idle baseline.

Run from the repository root:
    python3 Benchmarks/live_stress_benchmark.py [--seconds 600] [--rate 1000] [--idle-seconds S]

Boots scripts/vm once and runs, on snd-dummy (a card paced by a high-resolution timer) at 48 kHz
with --period 256 --periods 2 (the setting the live-input issue names; the emulated VM underruns
there now and then even idle, hence the baseline):

1. idle: `pianola live --autoconnect` with no input (for --idle-seconds, by default as long as
   the stress run): underruns here are the emulator's (threads woken late), not the input's;
2. stress: the same while the test keyboard (an ALSA sequencer client, Tests/Device/TestKeyboard)
   plays a dense random stream on all 16 channels at --rate events per second: note-ons and
   their note-offs 40-400 ms later, controllers (volume, pan, expression, modulation, sustain)
   and pitch bends.

Prints events sent, played and late, underruns per run and per minute, and peak voices.
"""
import argparse
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

GUEST = r"""
out="$1"; pianola="$2"; keyboard="$3"; font="$4"; idle_seconds="$5"
run() {
    "$pianola" live --soundfont "$font" --device hw:Dummy,0,0 --rate 48000 --period 256 --periods 2 \
        --autoconnect > /dev/null 2> "$out/$1.err" &
    pid=$!
    for _ in $(seq 300); do grep -q "MIDI input" "$out/$1.err" 2>/dev/null && break; sleep 0.1; done
}
run idle
sleep "$idle_seconds"
kill -TERM "$pid"; wait "$pid"
run stress
"$keyboard" "Stress Keyboard" "$out/stress.txt" "$out/stress.sent" 2>> "$out/stress.err"
sleep 0.5
kill -TERM "$pid"; wait "$pid"
"""


def script(seconds, rate, seed=1):
    """The keyboard's script: (ms, bytes) lines, `rate` events per second on 16 channels."""
    generator = random.Random(seed)
    events = []
    interval = 1000.0 / rate
    time = 0.0
    while time < seconds * 1000:
        kind = generator.random()
        channel = generator.randrange(16)
        if kind < 0.45:
            key = generator.randrange(36, 96)
            events.append((time, [0x90 | channel, key, generator.randrange(30, 127)]))
            events.append((time + generator.uniform(40, 400), [0x80 | channel, key, 0]))
            time += interval  # the note-off is the second event of the pair
        elif kind < 0.8:
            controller = generator.choice([1, 7, 10, 11, 64])
            events.append((time, [0xB0 | channel, controller, generator.randrange(128)]))
        else:
            value = generator.randrange(16384)
            events.append((time, [0xE0 | channel, value & 0x7F, value >> 7]))
        time += interval
    events.sort(key=lambda event: event[0])
    return [(round(ms, 3), data) for ms, data in events if ms < seconds * 1000 + 500]


def summary(path):
    text = open(path).read() if os.path.exists(path) else ""
    found = re.findall(r"(\d+) events played, (\d+) late, (\d+) underruns", text)
    voices = [int(value) for value in re.findall(r"(\d+) voices", text)]
    return (found[-1] if found else None), max(voices, default=0), text.strip()[-300:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--rate", type=int, default=1000, help="events per second")
    parser.add_argument("--idle-seconds", type=int, help="length of the idle baseline (default: --seconds)")
    args = parser.parse_args()
    for product in ("pianola", "test-keyboard"):
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True)
    binaries = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    with temporary_folder("stress") as work:
        events = script(args.seconds, args.rate)
        with open(os.path.join(work, "stress.txt"), "w") as file:
            for ms, data in events:
                file.write(f"{ms} " + " ".join(f"{byte:02x}" for byte in data) + "\n")
        with open(os.path.join(work, "guest.sh"), "w") as file:
            file.write(GUEST)
        idle = args.idle_seconds or args.seconds
        subprocess.run([os.path.join(ROOT, "scripts", "vm"), "--timeout", str(3 * args.seconds + idle + 300), "--out", work,
                        "--", "sh", os.path.join(work, "guest.sh"), work, os.path.join(binaries, "pianola"),
                        os.path.join(binaries, "test-keyboard"), os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"),
                        str(args.idle_seconds or args.seconds)], check=True)
        sent_path = os.path.join(work, "stress.sent")
        sent = sum(1 for _ in open(sent_path)) if os.path.exists(sent_path) else 0
        print(f"snd-dummy in the VM (software emulation), 48 kHz, 256 × 2")
        print("| run | seconds | events sent | played | late | underruns | underruns per minute | peak voices |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, count, seconds in (("idle (no input)", 0, idle),
                                     (f"stress ({args.rate} events/s, 16 channels)", sent, args.seconds)):
            found, voices, tail = summary(os.path.join(work, ("idle" if count == 0 else "stress") + ".err"))
            if not found:
                print(f"| {name} | {seconds} | {count} | (no summary: {tail}) |")
                continue
            played, late, underruns = (int(value) for value in found)
            print(f"| {name} | {seconds} | {count} | {played} | {late} | {underruns} | {underruns * 60 / seconds:.1f} |"
                  f" {voices} |")


if __name__ == "__main__":
    main()
