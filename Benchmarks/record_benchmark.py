#!/usr/bin/env python3
"""Recording CPU: `pianola record` side by side with `arecord`, in one run, in the qemu VM.

Run from the repository root:

    python3 Benchmarks/record_benchmark.py [--runs N] [--seconds S]   # CPU per recorded second
    python3 Benchmarks/record_benchmark.py --long [--seconds 600]     # one long take: overruns

Both record the same device, snd-dummy's capture (hw:Dummy,0,0, paced by a high-resolution timer
like a real card, which offers U8 and S16_LE), at 48 kHz, 2 channels, 16-bit samples, period
1024 x 3, into a 16-bit WAV file,
for 5 s and for S seconds (35 by default); the CPU time (user + system) of each process is read
from the kernel (getrusage of the children). pianola's meter is always measured (the terminal
display is not drawn: no terminal). The figure is CPU seconds per recorded second, the slope
between the two takes (start-up apart), best of N runs each, and the ratios.

--long records one take of S seconds (600 by default) at 1024 x 3 and reports pianola's overruns
and dropped frames (the --json summary). Software emulation is several times slower than the
host: figures are the VM's, not a real machine's.
"""
import argparse
import json
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402
DEVICE = "hw:Dummy,0,0"
SHORT = 5


def run(command):
    """Runs the command to its end; returns (standard output, standard error, exit status)."""
    process = subprocess.run(command, capture_output=True, text=True)
    return process.stdout, process.stderr, process.returncode


def measure(work, seconds, runs):
    """Best CPU seconds of each recorder for a short take (5 s) and a long one (`seconds`)."""
    pianola = os.path.join(work, "pianola")

    def commands(length):
        return {
            "arecord": ["arecord", "-q", "-D", DEVICE, "-f", "S16_LE", "-c", "2", "-r", "48000",
                        "--period-size=1024", "--buffer-size=3072", "-d", str(length), "-t", "wav",
                        os.path.join(work, "arecord.wav")],
            "pianola": [pianola, "record", "-d", DEVICE, "--rate", "48000", "--channels", "2", "--format", "s16",
                        "--period", "1024", "--periods", "3", "--duration", str(length), "--force", "--json",
                        "-o", os.path.join(work, "pianola.wav")],
        }

    best, notes = {}, {}
    for _ in range(runs):
        for length in (SHORT, seconds):
            for name, command in commands(length).items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                output, errors, status = run(command)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if status != 0:
                    raise SystemExit(f"{name} failed ({status}): {errors.strip()[-500:]}")
                used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                if name == "pianola" and length == seconds:
                    summary = json.loads(output)
                    notes[name] = f"{summary['overruns']} overruns, {summary['droppedFrames']} frames dropped"
                best[name, length] = min(best.get((name, length), used), used)
    return best, notes


def inside(work, seconds, runs, long):
    if long:
        pianola = os.path.join(work, "pianola")
        result = subprocess.run(
            [pianola, "record", "-d", DEVICE, "--rate", "48000", "--channels", "2", "--format", "s16", "--period",
             "1024", "--periods", "3", "--duration", str(seconds), "--json", "-o", os.path.join(work, "long.wav")],
            capture_output=True, text=True)
        summary = json.loads(result.stdout) if result.returncode == 0 else {}
        print(f"long take: {seconds} s at 48 kHz stereo s16, 1024 x 3 into {DEVICE}: exit {result.returncode}, "
              f"{summary.get('seconds')} s recorded, {summary.get('overruns')} overruns, "
              f"{summary.get('droppedFrames')} frames dropped")
        return
    best, notes = measure(work, seconds, runs)
    print(f"{SHORT} s and {seconds} s takes, {DEVICE}, 48 kHz stereo S16_LE into 16-bit WAV, period 1024 x 3, "
          f"best of {runs}")
    print(f"| recorder | CPU s, {SHORT} s take | CPU s, {seconds} s take | CPU s per recorded s (slope) "
          f"| start-up CPU s | notes |")
    print("|---|---:|---:|---:|---:|---|")
    slopes = {}
    for name in ("arecord", "pianola"):
        short, long = best[name, SHORT], best[name, seconds]
        slopes[name] = (long - short) / (seconds - SHORT)
        startup = short - SHORT * slopes[name]
        print(f"| {name} | {short:.3f} | {long:.3f} | {slopes[name]:.4f} | {startup:.3f} | {notes.get(name, '')} |")
    print(f"pianola / arecord: {slopes['pianola'] / slopes['arecord']:.2f}x per recorded second, "
          f"{best['pianola', seconds] / best['arecord', seconds]:.2f}x for the whole {seconds} s take")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--long", action="store_true", help="one long take: overruns and dropped frames")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # the VM side: the work directory
    args = parser.parse_args()
    seconds = args.seconds or (600 if args.long else 35)
    if args.inside:
        inside(args.inside, seconds, args.runs, args.long)
        return
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    binaries = subprocess.run(
        ["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True,
        text=True).stdout.strip()
    with temporary_folder("record-benchmark") as work:
        os.symlink(os.path.join(binaries, "pianola"), os.path.join(work, "pianola"))
        command = [os.path.join(ROOT, "scripts", "vm"), "--out", work, "--timeout", str(seconds * 8 + 600), "--",
                   sys.executable, os.path.abspath(__file__), "--inside", work, "--runs", str(args.runs),
                   "--seconds", str(seconds)] + (["--long"] if args.long else [])
        raise SystemExit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
