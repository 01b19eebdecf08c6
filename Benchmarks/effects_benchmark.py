#!/usr/bin/env python3
"""Effect cost: Pianola's effect nodes side by side with PyPI pedalboard, in one run.

Run from the repository root:  python3 Benchmarks/effects_benchmark.py [--seconds S] [--runs N]

Both process the same bytes: S seconds (default 60) of stereo Gaussian noise (sigma 0.25) at
44.1 kHz, float32, best of N runs (default 5); the figure is nanoseconds per stereo frame.
Pairs: a parametric band (pedalboard PeakFilter), a 4-band EQ (low shelf, two peaks, high shelf),
the reverb (pedalboard's is Freeverb), the limiter (BrickwallLimiter), the true-peak limiter
(BrickwallLimiter(true_peak=True)), and the chain EQ4 + reverb + limiter. Then the chain's cost
against synthesis: `pianola render` of a dense General MIDI file (dense16, 60 s) with and without
`--fx` for the same chain.
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

    # The chain against synthesis: the same dense file rendered with and without it.
    render_benchmark.ensure("mido")
    song = os.path.join(work, "dense16.mid")
    render_benchmark.dense16(song, 60)
    pianola = os.path.join(binaries, "pianola")
    chain = ["--fx", "eq:type=lowShelf,freq=100,gain=3", "--fx", "eq:type=parametric,freq=500,gain=-3,q=1",
             "--fx", "eq:type=parametric,freq=3000,gain=2,q=1", "--fx", "eq:type=highShelf,freq=8000,gain=-3",
             "--fx", "reverb:preset=mediumHall,mix=33", "--fx", "limiter:ceiling=-1"]
    def render(extra):
        start = time.perf_counter()
        subprocess.run([pianola, "render", "-q", song, "-o", os.path.join(work, "r.wav"), "-s",
                        os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2")] + extra, check=True)
        return time.perf_counter() - start
    # Best of 2 × runs, the two renders alternating (the machine's speed drifts).
    plain, with_chain = float("inf"), float("inf")
    for _ in range(2 * args.runs):
        plain = min(plain, render([]))
        with_chain = min(with_chain, render(chain))
    frames = 60 * rate
    print(f"\ndense16 (60 s), bundled font: render {plain:.3f} s, with the chain {with_chain:.3f} s:"
          f" the chain costs {100 * (with_chain - plain) / plain:.1f} % of the synthesis time"
          f" (by the chain's own time above: {swift['chain']:.1f} ns against {plain * 1e9 / frames:.0f} ns"
          f" per frame of the plain render, {100 * swift['chain'] / (plain * 1e9 / frames):.1f} %)")


if __name__ == "__main__":
    main()
