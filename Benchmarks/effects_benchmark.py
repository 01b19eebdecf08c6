#!/usr/bin/env python3
"""Effect cost: Pianola's effect nodes side by side with PyPI pedalboard, in one run.

Run from the repository root:  python3 Benchmarks/effects_benchmark.py [--seconds S] [--runs N]

Both process the same bytes: S seconds (default 60) of stereo Gaussian noise (sigma 0.25) at
44.1 kHz, float32, best of N runs (default 5); the figure is nanoseconds per stereo frame.
Pairs: a parametric band (pedalboard PeakFilter), a 4-band EQ (low shelf, two peaks, high shelf),
the reverb (pedalboard's is Freeverb), the limiter (BrickwallLimiter), the true-peak limiter
(BrickwallLimiter(true_peak=True)), and the chain EQ4 + reverb + limiter. Then the chain's cost
against synthesis: `pianola render` of a dense General MIDI file (dense16, 60 s) with and without
`--fx` for the same chain, with the bundled font and with Debian's FluidR3_GM: the difference as a
share of the whole render, and per output frame with the fixed costs (start-up, font loading, timed
on a one-note file) taken out of both.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import numpy as np
    import pedalboard as pb
    import render_benchmark

    subprocess.run(["swift", "build", "-c", "release", "--product", "effects-benchmark"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    binaries = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    rate = 44100
    work = tempfile.mkdtemp(prefix="pianola-effects-")
    noise = (np.random.default_rng(1).normal(0, 0.25, (args.seconds * rate, 2))).astype(np.float32)
    signal_path = os.path.join(work, "noise.f32")
    noise.tofile(signal_path)
    swift = {}
    out = subprocess.run([os.path.join(binaries, "effects-benchmark"), signal_path, str(rate), str(args.runs)],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        entry = json.loads(line)
        swift[entry["name"]] = entry["nsPerFrame"]

    planar = np.ascontiguousarray(noise.T)
    eq4 = [pb.LowShelfFilter(100, 3), pb.PeakFilter(500, -3, 1), pb.PeakFilter(3000, 2, 1), pb.HighShelfFilter(8000, -3)]
    cases = {
        "biquad": [pb.PeakFilter(1000, 6, 1)],
        "eq4": eq4,
        "reverb": [pb.Reverb()],
        "limiter": [pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5)],
        "limiterTruePeak": [pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5, true_peak=True)],
        "chain": eq4 + [pb.Reverb(), pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5)],
    }
    names = {"biquad": "parametric band (PeakFilter)", "eq4": "EQ, 4 bands", "reverb": "reverb (pedalboard: Freeverb)",
             "limiter": "limiter (BrickwallLimiter)", "limiterTruePeak": "true-peak limiter (BrickwallLimiter, true_peak)",
             "chain": "chain EQ4 + reverb + limiter"}
    print(f"{args.seconds} s of stereo noise at 44.1 kHz, best of {args.runs}, ns per stereo frame")
    print("| effect | pedalboard | pianola | pianola / pedalboard |")
    print("|---|---:|---:|---:|")
    for key, plugins in cases.items():
        board = pb.Pedalboard(plugins)
        best = float("inf")
        for _ in range(args.runs):
            board.reset()
            start = time.perf_counter()
            board(planar, rate, reset=True)
            best = min(best, time.perf_counter() - start)
        pedal = best * 1e9 / len(noise)
        print(f"| {names[key]} | {pedal:.1f} | {swift[key]:.1f} | {swift[key] / pedal:.2f}× |", flush=True)

    # The chain against synthesis: the same dense file rendered with and without it, with the
    # bundled font and with Debian's FluidR3_GM (the General MIDI font most players ship).
    render_benchmark.ensure("mido")
    song = os.path.join(work, "dense16.mid")
    render_benchmark.dense16(song, 60)
    note = os.path.join(work, "one_note.mid")
    render_benchmark.one_note(note)
    pianola = os.path.join(binaries, "pianola")
    chain = ["--fx", "eq:type=lowShelf,freq=100,gain=3", "--fx", "eq:type=parametric,freq=500,gain=-3,q=1",
             "--fx", "eq:type=parametric,freq=3000,gain=2,q=1", "--fx", "eq:type=highShelf,freq=8000,gain=-3",
             "--fx", "reverb:preset=mediumHall,mix=33", "--fx", "limiter:ceiling=-1"]
    output = os.path.join(work, "r.wav")

    def render(midi, font, extra):
        start = time.perf_counter()
        subprocess.run([pianola, "render", "-q", midi, "-o", output, "-s", font] + extra, check=True)
        return time.perf_counter() - start, wav_frames(output)

    fonts = [("PianolaGM (bundled)", os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2")),
             ("FluidR3_GM", "/usr/share/sounds/sf2/FluidR3_GM.sf2")]
    print("\nThe chain against synthesis: dense16 (60 s) rendered with and without it (best of 2 × runs,"
          " alternating); fixed cost = a one-note file with the same font (start-up, font loading)")
    print("| font | fixed s | plain s | frames | chain s | frames | chain, whole render | chain per frame,"
          " fixed cost out |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, font in fonts:
        if not os.path.exists(font):
            print(f"| {label} | (not installed: {font}) |")
            continue
        fixed = min(render(note, font, [])[0] for _ in range(args.runs))
        # Best of 2 × runs, the two renders alternating (the machine's speed drifts).
        plain, with_chain = (float("inf"), 0), (float("inf"), 0)
        for _ in range(2 * args.runs):
            plain = min(plain, render(song, font, []))
            with_chain = min(with_chain, render(song, font, chain))
        whole = (with_chain[0] - plain[0]) / plain[0]
        # Per output frame (the reverb lengthens the tail a little), start-up and loading excluded.
        synthesis = (plain[0] - fixed) / plain[1]
        per_frame = ((with_chain[0] - fixed) / with_chain[1] - synthesis) / synthesis
        print(f"| {label} | {fixed:.3f} | {plain[0]:.3f} | {plain[1]} | {with_chain[0]:.3f} | {with_chain[1]} |"
              f" {100 * whole:.1f} % | {100 * per_frame:.1f} % |", flush=True)
        if label.startswith("PianolaGM"):
            print(f"|  | by the chain's own {swift['chain']:.1f} ns per frame above against"
                  f" {synthesis * 1e9:.0f} ns of synthesis: {100 * swift['chain'] / (synthesis * 1e9):.1f} % |")


def wav_frames(path):
    """Frames in a WAV file, from its header (any encoding)."""
    import struct
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    position, align = 12, 1
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        if chunk == b"fmt ":
            align = struct.unpack("<H", data[position + 20:position + 22])[0]
        if chunk == b"data":
            return size // align
        position += 8 + size + (size & 1)
    raise ValueError(f"{path}: no data chunk")


if __name__ == "__main__":
    main()
