#!/usr/bin/env python3
"""Effect cost: Pianola's effect nodes side by side with PyPI pedalboard, in one run.

Run from the repository root:  python3 Benchmarks/effects_benchmark.py [--seconds S] [--runs N] [--no-render]

Both process the same bytes: S seconds (default 60) of stereo Gaussian noise (sigma 0.25) at
44.1 kHz, float32, best of N rounds (default 5) that alternate the two sides; the figure is
nanoseconds per stereo frame.
Pairs: a parametric band (pedalboard PeakFilter), a 4-band EQ (low shelf, two peaks, high shelf),
the reverb (pedalboard's is Freeverb), the limiter (BrickwallLimiter), the true-peak limiter
(BrickwallLimiter(true_peak=True)), the chain EQ4 + reverb + limiter, the compressor (Compressor), and the delay (Delay; with
and without the low-pass in the loop that pedalboard's lacks), the distortion (Distortion, tanh at
25 dB; Pianola at 8x, 4x and 1x oversampling, and its ring modulator at 8x: the oversampling
filters' cost, nearly), then the aliasing each distortion leaves (a 5 kHz
sine driven 60 dB, through `pianola process`; needs scipy). Then the chain's cost
(compressor + EQ4 + delay + reverb + limiter) against synthesis within one render of a dense
General MIDI file (dense16, 60 s): the song
synthesized quantum by quantum as `pianola render` does, each quantum then through the chain, the
two steps timed separately (`effects-benchmark --in-render`), with the bundled font and with
Debian's FluidR3_GM.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def aliasing(pb, np, binaries, work):
    """What the distortion costs buys: aliasing of a 5 kHz sine at 0.9 full scale, 48 kHz,
    driven 60 dB into tanh (`pianola process`, one run per oversampling factor) and into
    pedalboard's Distortion: the energy off the harmonics of 5 kHz, relative to all of it, over
    0.2 s after 0.3 s of settling, 0.1 s before the tone ends (whole periods on a 5 Hz grid, so no
    window)."""
    from scipy.io import wavfile
    rate = 48000
    t = np.arange(rate * 6 // 10) / rate  # 0.1 s beyond the part measured: the filters look ahead
    tone = (0.9 * np.sin(2 * np.pi * 5000 * t)).astype(np.float32)
    source = os.path.join(work, "sine5k.wav")
    wavfile.write(source, rate, np.stack([tone, tone], axis=1))

    def off_harmonics(signal):
        segment = signal[rate * 3 // 10: rate // 2].astype(np.float64)
        power = np.abs(np.fft.rfft(segment)) ** 2
        bins = np.arange(len(power)) * rate / len(segment)
        harmonic = np.isclose(bins % 5000, 0) | np.isclose(bins % 5000, 5000)
        return 10 * np.log10(power[~harmonic].sum() / power.sum())
    pedal = pb.Pedalboard([pb.Distortion(drive_db=60)])(np.stack([tone, tone]), rate)[0]
    print("\nAliasing, a 5 kHz sine at 0.9 full scale driven 60 dB into tanh at 48 kHz (energy off its harmonics):")
    print("| distortion | aliases |")
    print("|---|---:|")
    print(f"| pedalboard Distortion(drive_db=60) | {off_harmonics(pedal):.1f} dB |")
    for factor in (8, 4, 2, 1):
        output = os.path.join(work, f"distorted{factor}.wav")
        subprocess.run([os.path.join(binaries, "pianola"), "process", "-q", source, "-o", output, "--format", "f32",
                        "--fx", f"distortion:drive=60,tone=96000,oversampling={factor}"], check=True)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # libsndfile's PEAK chunk
            _, samples = wavfile.read(output)
        print(f"| pianola distortion, {factor}x | {off_harmonics(samples[:, 0]):.1f} dB |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-render", action="store_true", help="skip the chain-within-a-render part")
    args = parser.parse_args()
    import numpy as np
    import pedalboard as pb
    import render_benchmark

    subprocess.run(["swift", "build", "-c", "release", "--product", "effects-benchmark"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    binaries = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    rate = 44100
    with temporary_folder("effects") as work:
        noise = (np.random.default_rng(1).normal(0, 0.25, (args.seconds * rate, 2))).astype(np.float32)
        signal_path = os.path.join(work, "noise.f32")
        noise.tofile(signal_path)
        planar = np.ascontiguousarray(noise.T)
        def eq4():
            return [pb.LowShelfFilter(100, 3), pb.PeakFilter(500, -3, 1), pb.PeakFilter(3000, 2, 1),
                    pb.HighShelfFilter(8000, -3)]
        cases = {
            "biquad": [pb.PeakFilter(1000, 6, 1)],
            "eq4": eq4(),
            "eq4Matched": eq4(),
            "reverb": [pb.Reverb()],
            "limiter": [pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5)],
            "limiterTruePeak": [pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5, true_peak=True)],
            "chain": eq4() + [pb.Reverb(), pb.BrickwallLimiter(ceiling_db=-1, release_ms=100, lookahead_ms=5)],
            "compressor": [pb.Compressor(threshold_db=-20, ratio=4, attack_ms=10, release_ms=100)],
            "delay": [pb.Delay(delay_seconds=0.25, feedback=0.4, mix=0.3)],
            "delayLowPass": [pb.Delay(delay_seconds=0.25, feedback=0.4, mix=0.3)],
            "distortion": [pb.Distortion(drive_db=25)],
            "distortion4x": [pb.Distortion(drive_db=25)],
            "distortion1x": [pb.Distortion(drive_db=25)],
            "distortionRing8x": [pb.Distortion(drive_db=25)],
        }
        names = {"biquad": "parametric band (PeakFilter)", "eq4": "EQ, 4 bands",
                 "eq4Matched": "EQ, 4 bands, matched design (pedalboard: its cookbook EQ)", "reverb": "reverb (pedalboard: Freeverb)",
                 "limiter": "limiter (BrickwallLimiter)", "limiterTruePeak": "true-peak limiter (BrickwallLimiter, true_peak)",
                 "chain": "chain EQ4 + reverb + limiter", "compressor": "compressor, -20 dB, 4:1, 10/100 ms (Compressor)",
                 "delay": "delay, 0.25 s, 40 % feedback (Delay)",
                 "delayLowPass": "delay with a 6 kHz low-pass in the loop (pedalboard: its Delay, which has none)",
                 "distortion": "distortion, tanh, 25 dB drive, 8x (Distortion: tanh, not oversampled)",
                 "distortion4x": "distortion, the same at 4x",
                 "distortion1x": "distortion, the same at 1x (anti-aliased, not oversampled)",
                 "distortionRing8x": "ring modulator at 8x: nearly the oversampling filters alone (pedalboard: Distortion)"}
        # Rounds that alternate the two sides (one Pianola run of every effect, then one pedalboard run
        # of every effect), so that a slow stretch of a shared machine falls on both; best of the rounds.
        swift = {key: float("inf") for key in cases}
        pedal = {key: float("inf") for key in cases}
        boards = {key: pb.Pedalboard(plugins) for key, plugins in cases.items()}
        for _ in range(args.runs):
            out = subprocess.run([os.path.join(binaries, "effects-benchmark"), signal_path, str(rate), "1"],
                                 check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                entry = json.loads(line)
                swift[entry["name"]] = min(swift[entry["name"]], entry["nsPerFrame"])
            for key, board in boards.items():
                board.reset()
                start = time.perf_counter()
                board(planar, rate, reset=True)
                pedal[key] = min(pedal[key], (time.perf_counter() - start) * 1e9 / len(noise))
        print(f"{args.seconds} s of stereo noise at 44.1 kHz, best of {args.runs} alternating rounds, ns per stereo frame")
        print("| effect | pedalboard | pianola | pianola / pedalboard |")
        print("|---|---:|---:|---:|")
        for key in cases:
            print(f"| {names[key]} | {pedal[key]:.1f} | {swift[key]:.1f} | {swift[key] / pedal[key]:.2f}× |", flush=True)
        design = json.loads(subprocess.run([os.path.join(binaries, "effects-benchmark"), "--design-time"], check=True,
                                           capture_output=True, text=True).stdout)
        print(f"\nThe settled matched design (on the audio thread, when a band stops gliding), {design['designs']} "
              f"designs of every type: {design['meanMicroseconds']:.1f} µs on average, "
              f"{design['worstMicroseconds']:.1f} µs at worst")

        aliasing(pb, np, binaries, work)

        # The chain against synthesis, within one render: dense16 synthesized quantum by quantum (1024
        # frames, as `pianola render` does) and each quantum put through the chain, each step timed on
        # its own (so both shares come from the same moments of a noisy machine, and the chain runs in
        # a render's cache state); with the bundled font and with Debian's FluidR3_GM.
        if args.no_render:
            return
        render_benchmark.ensure("mido")
        song = os.path.join(work, "dense16.mid")
        render_benchmark.dense16(song, 60)
        # Issue 20's chain: compressor + EQ + delay + reverb + limiter.
        chain = ["compressor:threshold=-24,ratio=3,attack=10,release=150",
                 "eq:type=lowShelf,freq=100,gain=3", "eq:type=parametric,freq=500,gain=-3,q=1",
                 "eq:type=parametric,freq=3000,gain=2,q=1", "eq:type=highShelf,freq=8000,gain=-3",
                 "delay:time=1/8,feedback=30,lowpass=6000,mix=20",
                 "reverb:preset=mediumHall,mix=33", "limiter:ceiling=-1"]
        fonts = [("PianolaGM (bundled)", os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2")),
                 ("FluidR3_GM", "/usr/share/sounds/sf2/FluidR3_GM.sf2")]
        print("\nThe chain (compressor, EQ4, delay, reverb, limiter) within a render of dense16 (60 s, 16 channels), best of",
              args.runs, "renders")
        print("| font | synthesis ns/frame | chain ns/frame | chain / synthesis |")
        print("|---|---:|---:|---:|")
        for label, font in fonts:
            if not os.path.exists(font):
                print(f"| {label} | (not installed: {font}) | | |")
                continue
            out = subprocess.run([os.path.join(binaries, "effects-benchmark"), "--in-render", song, font, str(args.runs)]
                                 + chain, check=True, capture_output=True, text=True).stdout
            entry = json.loads(out.strip().splitlines()[-1])
            synthesis, cost = entry["synthesisNsPerFrame"], entry["chainNsPerFrame"]
            print(f"| {label} | {synthesis:.0f} | {cost:.1f} | {100 * cost / synthesis:.1f} % |", flush=True)


if __name__ == "__main__":
    main()
