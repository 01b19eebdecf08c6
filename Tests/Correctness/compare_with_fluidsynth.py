#!/usr/bin/env python3
"""Pianola's renders against FluidSynth's own (`fluidsynth -ni -F out.wav -R 0 -C 0 -r RATE font file`).

For each file it renders with FluidSynth, then with `pianola render` twice (synth reverb and chorus
off in all three):
  * `--timing fluidsynth`, which places events as FluidSynth's player does. This checks that the
    synthesis path is the same: the 10 ms RMS envelopes must correlate >= 0.99 and the integrated
    loudness (ITU-R BS.1770, pyloudnorm) must agree within 0.5 LU over the common length;
  * the default sample-accurate timing: the loudness must agree within 0.5 LU; the envelope
    correlation is reported. It is lower by design: FluidSynth reads the clock once per 64-frame
    block, truncates it to milliseconds, rounds it to ticks and applies events a block late, so
    its onsets come 64 frames (1.45 ms) late and wander by up to a block more; Pianola's do not.
    The last column measures what that alone costs: Pianola's own render against itself delayed
    by 64 frames. A render that is exactly on time cannot correlate better with FluidSynth's
    than that, and the two figures track each other file by file.

Then, bit for bit: a 10-minute song made here (`long_song`: 8 channels of dense, overlapping notes,
tempo changes at 104, 128.985 and 140.063 BPM, 120 ticks per quarter note, and a 2-minute one at
192) rendered by FluidSynth and by `pianola render --timing fluidsynth --threads 1`, both as 32-bit
floats, must be equal in every sample of their common length once quantized alike to 16 bits, and
their floats may differ by at most 1e-12 (a few near-silent samples differ in their last bits)
(FluidSynth's render goes on 2 s longer: its player's grace).

Usage: compare_with_fluidsynth.py PIANOLA SOUNDFONT FILE.mid...   (exit status 1 on any failure)
"""
import os, random, struct, subprocess, sys
import numpy as np
import pyloudnorm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Python"))
from temporary_folder import temporary_folder  # noqa: E402

RATE = 44100

def read_wav(path):
    import wave
    with wave.open(path) as handle:
        frames = handle.readframes(handle.getnframes())
        return np.frombuffer(frames, dtype=np.int16).reshape(-1, handle.getnchannels()).astype(np.float64) / 32768

def envelope(samples, window=RATE // 100):
    count = len(samples) // window
    return np.sqrt((samples[: count * window].reshape(count, window, -1) ** 2).mean(axis=(1, 2)))

def compare(reference, candidate):
    length = min(len(reference), len(candidate))
    a, b = reference[:length], candidate[:length]
    meter = pyloudnorm.Meter(RATE)
    correlation = float(np.corrcoef(envelope(a), envelope(b))[0, 1])
    return correlation, meter.integrated_loudness(a), meter.integrated_loudness(b)

def long_song(path, ticks_per_quarter=120, minutes=10.0, seed=41):
    """A format-1 song of `minutes` at fractional tempos (104, 128.985, 140.063 BPM) with dense,
    overlapping notes on 8 channels (drums on 10), retriggered keys, controllers and bends."""
    rng = random.Random(seed)
    tempos = [104.0, 128.985, 140.063]
    def vlq(v):
        out = [v & 0x7F]; v >>= 7
        while v: out.append(0x80 | (v & 0x7F)); v >>= 7
        return bytes(reversed(out))
    def track(events):
        events.sort(key=lambda e: (e[0], e[2]))
        body, last = b"", 0
        for tick, data, _ in events:
            body += vlq(tick - last) + data; last = tick
        body += vlq(0) + b"\xff\x2f\x00"
        return b"MTrk" + struct.pack(">I", len(body)) + body
    # Tempo map: a change every 4 bars until `minutes` have passed.
    conductor, tick, seconds, i = [], 0, 0.0, 0
    bar = 4 * ticks_per_quarter
    while seconds < minutes * 60:
        bpm = tempos[i % 3]; micros = round(60_000_000 / bpm)
        conductor.append((tick, b"\xff\x51\x03" + micros.to_bytes(3, "big"), 0))
        tick += 4 * bar; seconds += 16 * micros / 1e6; i += 1
    end = tick
    tracks = [track(conductor)]
    programs = [0, 48, 33, 73, 25, 61, 89, 40]
    for n, program in enumerate(programs):
        channel = 9 if n == 7 else n
        events = [(0, bytes([0xC0 | channel, program]), 0), (0, bytes([0xB0 | channel, 7, 90 + n * 4]), 0),
                  (0, bytes([0xB0 | channel, 10, 16 + n * 12]), 0)]
        t = rng.randrange(0, ticks_per_quarter)
        while t < end - bar:
            step = rng.choice([ticks_per_quarter // 4, ticks_per_quarter // 2, ticks_per_quarter, ticks_per_quarter // 3])
            length = rng.choice([step // 2, step, 2 * step, 4 * ticks_per_quarter])
            chord = 1 if channel == 9 else rng.choice([1, 1, 2, 3])
            for _ in range(chord):
                key = rng.choice([35, 36, 38, 42, 44, 46, 49, 51]) if channel == 9 else rng.randrange(36 + 4 * n, 60 + 4 * n)
                events.append((t, bytes([0x90 | channel, key, rng.randrange(40, 127)]), 2))
                events.append((t + max(1, length), bytes([0x80 | channel, key, 64]), 1))
            if rng.random() < 0.05:
                events.append((t, bytes([0xB0 | channel, 11, rng.randrange(60, 127)]), 0))
            if rng.random() < 0.03 and channel != 9:
                bend = rng.randrange(0, 16384)
                events.append((t, bytes([0xE0 | channel, bend & 0x7F, bend >> 7]), 0))
            if n == 0 and rng.random() < 0.02:
                events.append((t, bytes([0xB0, 64, 127]), 0))
                events.append((t + 2 * bar // 4, bytes([0xB0, 64, 0]), 0))
            t += step
        events.append((end - bar, bytes([0xE0 | channel, 0, 64]), 0))
        tracks.append(track(events))
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), ticks_per_quarter) + b"".join(tracks))
def bit_identical(pianola, font, work):
    """Renders the made songs with both; returns the number of failures."""
    failures = 0
    for ticks, minutes in ((120, 10.0), (192, 2.0)):
        song = os.path.join(work, f"long-{ticks}.mid")
        long_song(song, ticks, minutes)
        # 32-bit floats, headerless: the synthesizer's own samples, before any rounding to 16 bits
        # (FluidSynth's libsndfile floors; Pianola rounds to nearest).
        reference_path, out = os.path.join(work, "fluidsynth-long.raw"), os.path.join(work, "pianola-long.raw")
        subprocess.run(["fluidsynth", "-ni", "-q", "-F", reference_path, "-T", "raw", "-O", "float", "-R", "0", "-C", "0",
                        "-r", str(RATE), font, song], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([pianola, "render", "-q", song, "-o", out, "--format", "f32", "--soundfont", font,
                        "--rate", str(RATE), "--synth-reverb", "off", "--synth-chorus", "off", "--timing", "fluidsynth",
                        "--threads", "1", "--force"], check=True)
        reference, rendered = (np.fromfile(path, dtype="<f4").reshape(-1, 2) for path in (reference_path, out))
        length = min(len(reference), len(rendered))
        # Equal as 16-bit files: both quantized alike (to nearest, as Pianola writes them). As
        # floats, a few near-silent samples may differ in their last bits: at most 1e-12 is allowed.
        steps = [np.clip(np.round(x[:length].astype(np.float64) * 32768), -32768, 32767) for x in (reference, rendered)]
        equal = (steps[0] == steps[1]).all(axis=1)
        differing = np.abs(reference[:length].astype(np.float64) - rendered[:length]).max(axis=1)
        float_equal, largest = int((differing == 0).sum()), float(differing.max(initial=0))
        first = int(np.argmin(equal)) if not equal.all() else None
        ok = first is None and largest <= 1e-12 and length >= minutes * 60 * RATE
        failures += not ok
        detail = "every 16-bit sample equal" if first is None else f"first difference at frame {first} ({first / RATE:.3f} s)"
        print(f"{os.path.basename(song):34} bit for bit: {length / RATE:7.1f} s, {equal.mean() * 100:8.4f} % equal, "
              f"{detail}; as floats {length - float_equal} frames differ, by {largest:.1e} at most  {'ok' if ok else 'FAIL'}")
    return failures

def main():
    pianola, font, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with temporary_folder("compare") as work:
        failures = passes = 0
        print(f"{'file':34} {'timing':10} {'corr 10 ms':>10} {'LUFS fs':>8} {'LUFS pn':>8} {'ΔLU':>6}  result  self+64")
        for path in files:
            name = os.path.basename(path)
            reference_path = os.path.join(work, "fluidsynth.wav")
            subprocess.run(["fluidsynth", "-ni", "-q", "-F", reference_path, "-R", "0", "-C", "0", "-r", str(RATE), font, path],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            reference = read_wav(reference_path)
            for timing in ("fluidsynth", "exact"):
                out = os.path.join(work, f"pianola-{timing}.wav")
                subprocess.run([pianola, "render", "-q", path, "-o", out, "--soundfont", font, "--rate", str(RATE),
                                "--synth-reverb", "off", "--synth-chorus", "off", "--timing", timing, "--force"], check=True)
                rendered = read_wav(out)
                correlation, lufs_fs, lufs_pn = compare(reference, rendered)
                delayed = np.concatenate([np.zeros((64, rendered.shape[1])), rendered])[: len(rendered)]
                self_shift = compare(rendered, delayed)[0] if timing == "exact" else float("nan")
                delta = lufs_pn - lufs_fs
                ok = abs(delta) <= 0.5 and (timing == "exact" or correlation >= 0.99)
                passes += ok
                failures += not ok
                print(f"{name[:34]:34} {timing:10} {correlation:10.5f} {lufs_fs:8.2f} {lufs_pn:8.2f} {delta:6.2f}  {'ok' if ok else 'FAIL':6}  {self_shift:7.5f}")
        long_failures = bit_identical(pianola, font, work)
        failures += long_failures
        passes += 2 - long_failures
        print(f"fluidsynth comparison: {passes} passed, {failures} failed"
              + (" (PIANOLA_KEEP_TEST_FILES=1 keeps the files)" if failures else ""))
        return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
