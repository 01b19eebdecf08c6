#!/usr/bin/env python3
"""Key-to-sound latency of `pianola live`, by the output's own account, in the qemu VM.

Run from the repository root:  python3 Benchmarks/live_latency_benchmark.py [--notes N]

Boots scripts/vm once and, for each configuration below, starts `pianola live --autoconnect
--latency-report` on snd-dummy (a card paced by a high-resolution timer) and plays N short notes
from the test keyboard (an ALSA sequencer client, Tests/Device/TestKeyboard) at uneven intervals
(10-29 ms), so arrivals fall everywhere in a period. Each note's latency runs from the kernel's
arrival stamp to the moment the device plays the frame FluidSynth starts the note on (frames
written and snd_pcm_delay). Prints a table: percentiles, jitter (p99 - p1), late events, underruns.

The VM is software-emulated (no KVM here): threads wake late and the host is shared, so the
figures are an upper bound of what a real machine does with the same settings.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402
CONFIGS = [  # (rate, period, periods, delay ms)
    (48000, 256, 2, 1.0), (48000, 256, 2, 10.0), (48000, 512, 2, 5.0), (48000, 1024, 2, 5.0),
]

GUEST = r"""
out="$1"; pianola="$2"; keyboard="$3"; font="$4"
shift 4
index=0
while [ $# -gt 0 ]; do
    rate="$1"; period="$2"; periods="$3"; delay="$4"; shift 4
    name="run$index"
    "$pianola" live --soundfont "$font" --device hw:Dummy,0,0 --rate "$rate" --period "$period" \
        --periods "$periods" --delay "$delay" --autoconnect --latency-report "$out/$name.json" \
        > /dev/null 2> "$out/$name.err" &
    pid=$!
    for _ in $(seq 300); do grep -q "MIDI input" "$out/$name.err" 2>/dev/null && break; sleep 0.1; done
    "$keyboard" "Bench Keyboard $index" "$out/keys.txt" "$out/$name.sent" 2>> "$out/$name.err"
    sleep 0.5
    kill -TERM "$pid"; wait "$pid"
    index=$((index + 1))
done
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=400)
    args = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "test-keyboard"], cwd=ROOT, check=True)
    binaries = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    with temporary_folder("latency") as work:
        with open(os.path.join(work, "keys.txt"), "w") as file:
            time = 0
            for index in range(args.notes):
                key = 48 + index % 24
                file.write(f"{time} 90 {key:02x} 64\n{time + 5} 80 {key:02x} 00\n")
                time += 10 + index * 7 % 20
        with open(os.path.join(work, "guest.sh"), "w") as file:
            file.write(GUEST)
        arguments = [str(value) for config in CONFIGS for value in config]
        subprocess.run([os.path.join(ROOT, "scripts", "vm"), "--out", work, "--", "sh", os.path.join(work, "guest.sh"),
                        work, os.path.join(binaries, "pianola"), os.path.join(binaries, "test-keyboard"),
                        os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2")] + arguments, check=True)
        print(f"{args.notes} notes per run, snd-dummy in the VM (software emulation)")
        print("| rate | period × periods | buffer ms | delay ms | p1 | p50 | p99 | max | jitter (p99-p1) | late | underruns |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for index, (rate, period, periods, delay) in enumerate(CONFIGS):
            path = os.path.join(work, f"run{index}.json")
            if not os.path.exists(path):
                print(f"| {rate} | {period} × {periods} | | {delay} | (no report: {open(os.path.join(work, f'run{index}.err')).read().strip()[-200:]}) |")
                continue
            report = json.load(open(path))
            latency = report["latencyMs"]
            late = open(os.path.join(work, f"run{index}.err")).read()
            late_count = late.rsplit(" late", 1)[0].rsplit(", ", 1)[-1] if " late" in late else "?"
            print(f"| {rate} | {period} × {periods} | {report['bufferMs']:.2f} | {delay} | {latency['p1']:.2f} |"
                  f" {latency['p50']:.2f} | {latency['p99']:.2f} | {latency['max']:.2f} | {report['jitterMs']:.2f} |"
                  f" {late_count} | {report['underruns']} |")


if __name__ == "__main__":
    main()
