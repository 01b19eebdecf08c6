#!/usr/bin/env python3
"""Playback CPU: `pianola play` side by side with `fluidsynth -a alsa`, in one run.

Run from the repository root:

    python3 Benchmarks/playback_benchmark.py [--runs N] [--seconds S]          # on this machine
    python3 Benchmarks/playback_benchmark.py --vm [--runs N] [--seconds S]     # in the qemu VM

Both players play the same generated dense General MIDI file (dense16 of render_benchmark.py:
16 channels, about 40 voices sounding) with the same SoundFont, at 44.1 kHz, float samples,
period 256 x 2, into the same ALSA device, and the CPU time (user + system) of each process is
read from the kernel (wait4). The figure is CPU seconds per second of audio; best of N runs each.

- On this machine the device is ALSA's `null` plugin: there is no sound card here, and `null` is
  not paced, so both players run flat out and the figure is the pure cost of playing.
- With --vm the benchmark runs inside scripts/vm (Debian's kernel under software emulation) into
  snd-dummy, which is paced by a high-resolution timer like a real card. Emulation is several
  times slower than the host, so a dense file cannot be played in real time there; pianola's
  underruns are reported next to its CPU (FluidSynth's ALSA driver does not report its own).
Fonts: Debian's FluidR3_GM (fluid-soundfont-gm) and Pianola's bundled font.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def cpu_seconds(command):
    """Runs the command; returns (user + system CPU seconds, exit status, standard error)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, process.returncode, errors


def measure(pianola, font, song, device, runs):
    fluidsynth = [
        "fluidsynth", "-ni", "-a", "alsa", "-o", f"audio.alsa.device={device}", "-o", "audio.period-size=256",
        "-o", "audio.periods=2", "-o", "audio.sample-format=float", "-r", "44100", font, song,
    ]
    player = [pianola, "play", song, "-s", font, "-d", device, "--period", "256", "--periods", "2", "--rate", "44100"]
    return best_of((("fluidsynth", fluidsynth), ("pianola", player)), runs)


def best_of(commands, runs):
    """The least CPU time of each (name, command) over `runs` runs, alternating, with pianola's
    underruns (its progress lines; FluidSynth's drivers recover from theirs without a word)."""
    best = {}
    for _ in range(runs):
        for name, command in commands:
            seconds, status, errors = cpu_seconds(command)
            if status != 0:
                raise SystemExit(f"{name} failed ({status}): {errors.strip()[-500:]}")
            counts = [int(n) for n in re.findall(r"(\d+) underruns", errors)]
            underruns = max(counts) if name == "pianola" and counts else "not reported"
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, underruns)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=None, help="length of the dense file")
    parser.add_argument("--vm", action="store_true", help="run inside scripts/vm, into snd-dummy")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # the VM side: the work directory
    args = parser.parse_args()

    if args.inside:
        work = args.inside
        pianola = os.path.join(work, "pianola")
        song = os.path.join(work, "dense16.mid")
        device = "hw:Dummy,0,0"
    else:
        import render_benchmark

        render_benchmark.ensure("mido")
        subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
        binaries = subprocess.run(
            ["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True,
            text=True).stdout.strip()
        with temporary_folder("playback-benchmark") as work:
            pianola = os.path.join(binaries, "pianola")
            song = os.path.join(work, "dense16.mid")
            seconds = args.seconds or (20 if args.vm else 60)
            render_benchmark.dense16(song, seconds)
            if args.vm:
                os.symlink(pianola, os.path.join(work, "pianola"))
                command = [os.path.join(ROOT, "scripts", "vm"), "--out", work, "--timeout", "3000", "--",
                           sys.executable, os.path.abspath(__file__), "--inside", work, "--runs", str(args.runs)]
                raise SystemExit(subprocess.run(command).returncode)
            device = "null"

    import mido

    audio_seconds = mido.MidiFile(song).length
    fonts = [("FluidR3_GM", "/usr/share/sounds/sf2/FluidR3_GM.sf2"),
             ("PianolaGM", os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"))]
    print(f"dense16, {audio_seconds:.1f} s of audio, device {device}, 44.1 kHz float, period 256 x 2,"
          f" best of {args.runs}")
    print("| font | fluidsynth CPU s per audio s | pianola CPU s per audio s | pianola / fluidsynth |"
          " underruns (fluidsynth / pianola) |")
    print("|---|---:|---:|---:|---|")
    for name, font in fonts:
        if not os.path.exists(font):
            print(f"| {name} | (missing: {font}) | | | |")
            continue
        best = measure(pianola, font, song, device, args.runs)
        fs, pn = best["fluidsynth"][0] / audio_seconds, best["pianola"][0] / audio_seconds
        print(f"| {name} | {fs:.4f} | {pn:.4f} | {pn / fs:.2f}× | {best['fluidsynth'][1]} / {best['pianola'][1]} |",
              flush=True)


if __name__ == "__main__":
    main()
