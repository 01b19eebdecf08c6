#!/usr/bin/env python3
"""Time-pitch: `pianola process --fx timepitch` (SoundTouch) beside PyPI pedalboard's time_stretch
(Rubber Band), on the same bytes, in one run.

Run from the repository root:  python3 Benchmarks/timepitch_benchmark.py [--runs N]

The music is the demo song rendered by `pianola render` with the bundled font (stereo, 48 kHz,
float), stretched at three settings (rate 0.8 with +300 cents, rate 1.5, pitch -700 cents at rate
1). Cost: pianola's offline one is the whole `process` command less the same command without an
effect (file reading and writing, start-up); its streaming one the `TimePitchNode` that `render`,
`play` and `live` use, a player through it in an engine (`effects-benchmark --timepitch`, on the
same samples in memory); pedalboard's the `time_stretch` call on the array in memory; best of N
runs (default 3), seconds of wall time per second of music. Quality, both sides:
the length against 1/rate, a 1 kHz sine's pitch against the cents asked, and a click train's
onsets (clicks every 100 ms: how many come out, and the worst distance of an expected onset from
the nearest one found).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import render_benchmark
    for package in ("numpy", "scipy", "pedalboard"):
        render_benchmark.ensure(package)
    import numpy as np
    import pedalboard as pb
    from scipy.io import wavfile
    warnings.simplefilter("ignore")  # libsndfile's PEAK chunk
    binaries = render_benchmark.release_binaries("pianola", "effects-benchmark")
    pianola = os.path.join(binaries, "pianola")
    with temporary_folder("timepitch") as work:
        rate = 48000
        song = os.path.join(work, "song.wav")
        subprocess.run([pianola, "render", "-q", os.path.join(ROOT, "Examples", "demo-song.mid"), "-o", song,
                        "--format", "f32", "--rate", str(rate)], check=True)
        _, music = wavfile.read(song)
        seconds = len(music) / rate
        settings = [(0.8, 300), (1.5, 0), (1.0, -700)]

        def pianola_process(source, target, fx):
            command = [pianola, "process", "-q", source, "-o", target, "--format", "f32"]
            return command + (["--fx", fx] if fx else [])

        def best(command):
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                subprocess.run(command, check=True)
                times.append(time.perf_counter() - start)
            return min(times)

        plain = best(pianola_process(song, os.path.join(work, "plain.wav"), None))
        print(f"The demo song rendered ({seconds:.1f} s, stereo, 48 kHz), best of {args.runs}; seconds per second of music")
        print("| setting | pedalboard time_stretch | pianola offline (`process`) | pianola streaming (node) | "
              "offline / pedalboard | streaming / pedalboard |")
        print("|---|---:|---:|---:|---:|---:|")
        planar = np.ascontiguousarray(music.T.astype(np.float32))
        raw = os.path.join(work, "song.f32")
        music.astype(np.float32).tofile(raw)
        for stretch, cents in settings:
            fx = f"timepitch:rate={stretch},pitch={cents}"
            ours = best(pianola_process(song, os.path.join(work, "out.wav"), fx)) - plain
            out = subprocess.run([os.path.join(binaries, "effects-benchmark"), "--timepitch", raw, str(rate),
                                  str(args.runs), str(stretch), str(cents)], check=True, capture_output=True, text=True)
            streaming = json.loads(out.stdout.strip().splitlines()[-1])["secondsPerSecond"]
            theirs = []
            for _ in range(args.runs):
                start = time.perf_counter()
                pb.time_stretch(planar, rate, stretch, cents / 100)
                theirs.append(time.perf_counter() - start)
            theirs = min(theirs) / seconds
            print(f"| rate {stretch}, {cents:+d} cents | {theirs:.4f} | {ours / seconds:.4f} | {streaming:.4f} | "
                  f"{ours / seconds / theirs:.2f}x | {streaming / theirs:.2f}x |", flush=True)

        t = np.arange(3 * rate) / rate
        sine = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
        clicks = np.zeros(3 * rate, np.float32)
        clicks[::4800] = 0.9

        def through_pianola(signal, fx):
            source, target = os.path.join(work, "in.wav"), os.path.join(work, "q.wav")
            wavfile.write(source, rate, signal)
            subprocess.run(pianola_process(source, target, fx), check=True)
            return wavfile.read(target)[1]

        def frequency(y):
            segment = y[4000:len(y) - 4000]
            up = np.nonzero((segment[:-1] < 0) & (segment[1:] >= 0))[0]
            a, b = segment[up], segment[up + 1]
            crossings = up + a / (a - b)
            return (len(crossings) - 1) * rate / (crossings[-1] - crossings[0])

        def onsets(y, stretch):
            found, last = [], -10 ** 9
            for index in np.nonzero(np.abs(y) > 0.1)[0]:
                if index - last > 240:
                    found.append(index)
                last = index
            found = np.array(found)
            expected = np.arange(30) * 4800 / stretch
            expected = expected[expected < len(y) - 2000]
            worst = max(np.min(np.abs(found - e)) for e in expected) / rate * 1000
            return f"{len(found)} of {len(expected)}, worst {worst:.1f} ms"

        print("\nQuality: length (frames, against 1/rate), a 1 kHz sine's pitch error (cents), click onsets found")
        print("| setting | side | length | pitch error | clicks |")
        print("|---|---|---:|---:|---|")
        for stretch, cents in settings:
            fx = f"timepitch:rate={stretch},pitch={cents}"
            sides = [("pedalboard", lambda s: pb.time_stretch(s[None, :], rate, stretch, cents / 100)[0]),
                     ("pianola", lambda s: through_pianola(s, fx))]
            for side, run in sides:
                toned = run(sine)
                error = 1200 * np.log2(frequency(toned) / 1000) - cents
                print(f"| rate {stretch}, {cents:+d} cents | {side} | {len(toned)} / {round(len(sine) / stretch)} | "
                      f"{error:+.2f} | {onsets(run(clicks), stretch)} |", flush=True)


if __name__ == "__main__":
    main()
