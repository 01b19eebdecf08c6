#!/usr/bin/env python3
"""The limiter's ceiling, measured with a BS.1770 true-peak meter (libebur128, through PyPI pyebur128).

    limiter_true_peak.py PIANOLA

Writes adversarial stimuli (2 s, stereo, 48 kHz, float WAV), runs `pianola process --fx
limiter:ceiling=-1,truePeak=on[,preGain=…]` on each, and measures the output's sample peak and
true peak (4x oversampled, ITU-R BS.1770, as libebur128 computes it). Gates: sample peak at most
the ceiling; true peak at most the ceiling + 0.1 dB. The sinc-sign burst, which defeats any short
4x interpolator, and a sweep into the last 5 % below Nyquist (where the detector's interpolator,
accurate to 0.11 dB up to 0.45 x the rate, falls off) are reported but not gated. Also
checks that the output is the input delayed by nothing (the latency is compensated) where the
limiter does not act. Prints one line per stimulus; exits non-zero if any gate fails.
"""
import os
import subprocess
import sys

import numpy as np
import pyebur128

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Python"))
from temporary_folder import temporary_folder  # noqa: E402

RATE = 48000
CEILING = -1.0


def write_wav(path, stereo):
    data = stereo.astype("<f4").tobytes()
    header = b"RIFF" + (36 + len(data)).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    header += (3).to_bytes(2, "little") + (2).to_bytes(2, "little") + RATE.to_bytes(4, "little")
    header += (RATE * 8).to_bytes(4, "little") + (8).to_bytes(2, "little") + (32).to_bytes(2, "little")
    open(path, "wb").write(header + b"data" + len(data).to_bytes(4, "little") + data)


def read_wav(path):
    data = open(path, "rb").read()
    offset = 12
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], int.from_bytes(data[offset + 4:offset + 8], "little")
        if chunk == b"data":
            return np.frombuffer(data[offset + 8:offset + 8 + size], dtype="<f4").reshape(-1, 2)
        offset += 8 + size + (size & 1)
    raise ValueError(path)


def meter(stereo):
    state = pyebur128.R128State(2, RATE, pyebur128.MeasurementMode.MODE_TRUE_PEAK | pyebur128.MeasurementMode.MODE_SAMPLE_PEAK)
    state.add_frames(np.ascontiguousarray(stereo, dtype=np.float64).reshape(-1), len(stereo))
    true_peak = max(pyebur128.get_true_peak(state, channel) for channel in range(2))
    sample_peak = max(pyebur128.get_sample_peak(state, channel) for channel in range(2))
    return 20 * np.log10(sample_peak), 20 * np.log10(true_peak)


def stimuli():
    n = np.arange(2 * RATE)
    rng = np.random.default_rng(7)
    square = np.sign(np.sin(2 * np.pi * 997 * n / RATE))
    square_1k = np.sign(np.sin(2 * np.pi * 1000 * n / RATE + 0.1))
    quarter = np.sqrt(2) * np.sin(np.pi / 2 * n + np.pi / 4)  # samples ±1, +3.01 dBTP
    impulses = np.zeros(len(n))
    impulses[1000::4800] = 10 ** (12 / 20)
    burst = np.zeros(len(n))
    k = np.arange(-64, 64)
    pattern = np.sign(np.sinc(k + 0.5))
    for start in range(2000, len(n) - 200, 4800):
        burst[start:start + 128] = pattern
    noise = rng.uniform(-0.3, 0.3, len(n))
    sweep = np.sin(2 * np.pi * np.cumsum(np.geomspace(20, 20000, len(n))) / RATE)
    sweep_high = np.sin(2 * np.pi * np.cumsum(np.geomspace(20, 23000, len(n))) / RATE)
    return [
        ("997 Hz square, 0 dBFS", square, 0, True), ("1 kHz square, +6 dB", square_1k, 6, True),
        ("fs/4 sine at 45°, +3 dBTP", quarter, 0, True), ("impulses, +12 dBFS", impulses, 0, True),
        ("white noise, +20 dB pre-gain", noise, 20, True), ("sine sweep 20 Hz-20 kHz, +6 dB", sweep, 6, True),
        ("sine sweep to 23 kHz, +6 dB (report only: past the detector's band)", sweep_high, 6, False),
        ("sinc-sign bursts (report only)", burst, 0, False),
    ]


def main():
    pianola = sys.argv[1]
    with temporary_folder("limiter") as work:
        failures = []
        for index, (name, mono, pre_gain, gated) in enumerate(stimuli()):
            stereo = np.stack([mono, np.roll(mono, 7)], axis=1).astype(np.float32)
            source, target = os.path.join(work, f"in{index}.wav"), os.path.join(work, f"out{index}.wav")
            write_wav(source, stereo)
            result = subprocess.run(
                [pianola, "process", source, "-o", target, "--format", "f32", "-q", "--fx",
                 f"limiter:ceiling={CEILING},truePeak=on,preGain={pre_gain},attack=5,release=100"],
                capture_output=True, text=True)
            if result.returncode != 0:
                failures.append(name)
                print(f"FAIL {name}: pianola exited {result.returncode}: {result.stderr.strip()}")
                continue
            output = read_wav(target)
            sample_peak, true_peak = meter(output)
            ok = len(output) == len(stereo) and sample_peak <= CEILING + 1e-4 and (not gated or true_peak <= CEILING + 0.1)
            if not ok:
                failures.append(name)
            _, input_true_peak = meter(stereo * 10 ** (pre_gain / 20))
            print(f"{'PASS' if ok else 'FAIL'} {name}: in {input_true_peak:+.2f} dBTP -> out sample peak {sample_peak:+.2f} dBFS,"
                  f" true peak {true_peak:+.2f} dBTP{'' if gated else ' (not gated)'}")
        # Latency compensated: a quiet signal comes out unchanged and in place.
        quiet = (np.random.default_rng(3).uniform(-0.05, 0.05, (RATE, 2))).astype(np.float32)
        source, target = os.path.join(work, "quiet.wav"), os.path.join(work, "quiet-out.wav")
        write_wav(source, quiet)
        subprocess.run([pianola, "process", source, "-o", target, "--format", "f32", "-q", "--fx", "limiter:truePeak=on"],
                       check=True)
        difference = np.abs(read_wav(target) - quiet).max()
        aligned = difference < 1e-6
        print(f"{'PASS' if aligned else 'FAIL'} below the ceiling the output is the input, in place: largest difference {difference:.2e}")
        if not aligned:
            failures.append("alignment")
        print(f"limiter true-peak tests: {'all passed' if not failures else 'FAILED: ' + ', '.join(failures)}"
              + (" (PIANOLA_KEEP_TEST_FILES=1 keeps the files)" if failures else ""))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
