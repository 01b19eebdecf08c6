#!/usr/bin/env python3
"""Recording CPU: `pianola record` side by side with `arecord`, in one run, in the qemu VM.

Run from the repository root:

    python3 Benchmarks/record_benchmark.py [--runs N] [--seconds S]   # CPU per recorded second
    python3 Benchmarks/record_benchmark.py --long [--seconds 600]     # one long take: overruns

Both record the same device, snd-dummy's capture (hw:Dummy,0,0, paced by a high-resolution timer
like a real card), at 48 kHz, 2 channels, float samples, period 1024 x 3, into a float WAV file,
for S seconds (20 by default); the CPU time (user + system) of each process is read from the
kernel (wait4). pianola's meter is always measured (the terminal display is not drawn: no
terminal). The figure is CPU seconds per recorded second, best of N runs each, and the ratio.

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
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = "hw:Dummy,0,0"


def run(command):
    """Runs the command to its end; returns (standard output, standard error, exit status)."""
    process = subprocess.run(command, capture_output=True, text=True)
    return process.stdout, process.stderr, process.returncode


def measure(work, seconds, runs):
    pianola = os.path.join(work, "pianola")
    commands = {
        "arecord": ["arecord", "-q", "-D", DEVICE, "-f", "FLOAT_LE", "-c", "2", "-r", "48000", "--period-size=1024",
                    "--buffer-size=3072", "-d", str(seconds), "-t", "wav", os.path.join(work, "arecord.wav")],
        "pianola": [pianola, "record", "-d", DEVICE, "--rate", "48000", "--channels", "2", "--format", "f32",
                    "--period", "1024", "--periods", "3", "--duration", str(seconds), "--force", "--json",
                    "-o", os.path.join(work, "pianola.wav")],
    }
    best, notes = {}, {}

    for _ in range(runs):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            output, errors, status = run(command)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if status != 0:
                raise SystemExit(f"{name} failed ({status}): {errors.strip()[-500:]}")
            used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if name == "arecord":
                os.unlink(os.path.join(work, "arecord.wav"))
            if name == "pianola":
                summary = json.loads(output)
                notes[name] = f"{summary['overruns']} overruns, {summary['droppedFrames']} frames dropped"
            best[name] = min(best.get(name, used), used)
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
    print(f"{seconds} s takes, {DEVICE}, 48 kHz stereo float, period 1024 x 3, best of {runs}")
    print("| recorder | CPU s per recorded s | vs arecord | notes |")
    print("|---|---:|---:|---|")
    for name in ("arecord", "pianola"):
        print(f"| {name} | {best[name] / seconds:.4f} | {best[name] / best['arecord']:.2f}× | {notes.get(name, '')} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--long", action="store_true", help="one long take: overruns and dropped frames")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # the VM side: the work directory
    args = parser.parse_args()
    seconds = args.seconds or (600 if args.long else 20)
    if args.inside:
        inside(args.inside, seconds, args.runs, args.long)
        return
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    binaries = subprocess.run(
        ["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True,
        text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="pianola-record-benchmark-")
    os.symlink(os.path.join(binaries, "pianola"), os.path.join(work, "pianola"))
    command = [os.path.join(ROOT, "scripts", "vm"), "--out", work, "--timeout", str(seconds * 8 + 600), "--",
               sys.executable, os.path.abspath(__file__), "--inside", work, "--runs", str(args.runs),
               "--seconds", str(seconds)] + (["--long"] if args.long else [])
    raise SystemExit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
