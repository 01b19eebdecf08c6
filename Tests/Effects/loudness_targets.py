#!/usr/bin/env python3
"""Loudness targets, measured independently: `pianola render --loudness L --true-peak -1`.

    loudness_targets.py PIANOLA SOUNDFONT [CORPUS]

Renders the demo song and, when the shared corpus is there, two real-world songs from it, at
-14 and -23 LUFS under -1 dBTP (float WAV), then measures each output: integrated loudness with
PyPI pyloudnorm (its own BS.1770-4 implementation, not the libebur128 that pianola uses) and
true peak with libebur128 (PyPI pyebur128, 4x oversampled). Gates: loudness within +-0.5 LU of
the target, true peak at most the ceiling. Also renders -8 LUFS, out of reach under -1 dBTP for
the demo: pianola must say so, exit 0 and keep the ceiling. Exits non-zero if a gate fails.
"""
import os
import subprocess
import sys

import numpy as np
import pyebur128
import pyloudnorm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Python"))
from temporary_folder import temporary_folder  # noqa: E402

CEILING = -1.0


def read_wav(path):
    data = open(path, "rb").read()
    offset, rate = 12, None
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], int.from_bytes(data[offset + 4:offset + 8], "little")
        if chunk == b"fmt ":
            rate = int.from_bytes(data[offset + 12:offset + 16], "little")
        if chunk == b"data":
            return np.frombuffer(data[offset + 8:offset + 8 + size], dtype="<f4").reshape(-1, 2).astype(np.float64), rate
        offset += 8 + size + (size & 1)
    raise ValueError(path)


def measure(path):
    audio, rate = read_wav(path)
    loudness = pyloudnorm.Meter(rate).integrated_loudness(audio)
    state = pyebur128.R128State(2, rate, pyebur128.MeasurementMode.MODE_TRUE_PEAK)
    state.add_frames(np.ascontiguousarray(audio).reshape(-1), len(audio))
    peak = max(pyebur128.get_true_peak(state, channel) for channel in range(2))
    return loudness, 20 * np.log10(peak)


def main():
    pianola, font = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else None
    songs = [os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "demo-song.mid")]
    if corpus and os.path.isdir(corpus):
        found = []
        for root, _, names in os.walk(corpus):
            found += [os.path.join(root, name) for name in names if name.lower().endswith(".mid")]
        # Two songs of a minute or two (files of 12-17 KB), the smallest first.
        pop = sorted((os.path.getsize(path), path) for path in found
                     if 12000 < os.path.getsize(path) < 17000 and "drywetmidi" in path)
        songs += [path for _, path in pop[:2]]
    else:
        print("real-world songs skipped: the shared corpus is not there (only the demo song)")
    with temporary_folder("loudness") as work:
        failures = 0
        for song in songs:
            for target in (-14.0, -23.0):
                out = os.path.join(work, f"{os.path.basename(song)}.{int(-target)}.wav")
                subprocess.run([pianola, "render", "-q", song, "-o", out, "-s", font, "--format", "f32",
                                "--loudness", str(target), "--true-peak", str(CEILING)], check=True)
                loudness, peak = measure(out)
                ok = abs(loudness - target) <= 0.5 and peak <= CEILING
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {os.path.basename(song)} at {target:.0f} LUFS: "
                      f"{loudness:.2f} LUFS (pyloudnorm), {peak:.2f} dBTP (libebur128)", flush=True)
        out = os.path.join(work, "demo.-8.wav")
        result = subprocess.run([pianola, "render", songs[0], "-o", out, "-s", font, "--format", "f32",
                                 "--loudness", "-8"], capture_output=True, text=True)
        loudness, peak = measure(out)
        ok = result.returncode == 0 and "out of reach" in result.stderr and peak <= CEILING
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} demo at -8 LUFS (out of reach): said so, {loudness:.2f} LUFS, {peak:.2f} dBTP")
        print("loudness tests: " + ("all passed" if failures == 0 else f"{failures} failed"))
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
