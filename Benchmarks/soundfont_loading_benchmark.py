#!/usr/bin/env python3
"""Loading only what a song needs: `pianola render` side by side with `fluidsynth -F`, in one run.

Run from the repository root:  python3 Benchmarks/soundfont_loading_benchmark.py [--runs N]

For a short song (one program, 60 notes) and a dense one (16 channels, 14 programs and drums,
60 s), with Debian's FluidR3Mono_GM.sf3 (SF3, Ogg-compressed, 23 MB) and FluidR3_GM.sf2 (SF2,
148 MB), it measures wall time (best of N) and peak resident memory (the child's ru_maxrss) of:
  pianola render --load song (the default: only the song's presets, SF3 decoded on every core),
  pianola render --load all (the whole font),
  fluidsynth -F with synth.dynamic-sample-loading=1 (presets loaded as they are selected),
  fluidsynth -F (the whole font),
all at 44.1 kHz with reverb and chorus on, and prints the ratios. Also the process baselines:
`pianola --help` and `fluidsynth --version` (runtime and libraries, before any work).
"""
import argparse, os, random, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

def run(command):
    """Wall seconds and peak RSS (MB) of one child."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(command)}")
    return elapsed, usage.ru_maxrss / 1024

def best(runs, command):
    results = [run(command) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import render_benchmark as helpers
    helpers.ensure("mido")
    if shutil.which("fluidsynth") is None:
        sys.exit("install Debian's fluidsynth, fluidr3mono-gm-soundfont and fluid-soundfont-gm")
    subprocess.check_call(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, stdout=subprocess.DEVNULL)
    pianola = os.path.join(subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, text=True).strip(), "pianola")
    with temporary_folder("loading") as work:
        songs = {"short": os.path.join(work, "short.mid"), "dense": os.path.join(work, "dense.mid")}
        helpers.short_piece(songs["short"], 3)
        helpers.dense16(songs["dense"], 60)
        fonts = [("FluidR3Mono_GM.sf3", "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"), ("FluidR3_GM.sf2", "/usr/share/sounds/sf2/FluidR3_GM.sf2")]
        out = os.path.join(work, "out.wav")
        print(f"baseline: pianola --help {run([pianola, '--help'])[1]:.1f} MB, fluidsynth --version {run(['fluidsynth', '--version'])[1]:.1f} MB")
        print("| font | song | pianola --load song | pianola --load all | fluidsynth dynamic | fluidsynth default | time song/dyn, song/default | memory song/dyn, song/default |")
        print("|---|---|---|---|---|---|---|---|")
        for name, font in fonts:
            if not os.path.exists(font):
                print(f"| {name} | skipped: {font} not found |"); continue
            for song_name, song in songs.items():
                fs = ["fluidsynth", "-ni", "-q", "-F", out, "-r", "44100"]
                song_run = best(args.runs, [pianola, "render", "-q", "--force", "--load", "song", "-s", font, "--rate", "44100", song, "-o", out])
                all_run = best(args.runs, [pianola, "render", "-q", "--force", "--load", "all", "-s", font, "--rate", "44100", song, "-o", out])
                dyn = best(args.runs, fs + ["-o", "synth.dynamic-sample-loading=1", font, song])
                whole = best(args.runs, fs + [font, song])
                cell = lambda r: f"{r[0]:.2f} s, {r[1]:.0f} MB"
                print(f"| {name} | {song_name} | {cell(song_run)} | {cell(all_run)} | {cell(dyn)} | {cell(whole)} | "
                      f"{song_run[0] / dyn[0]:.2f}×, {song_run[0] / whole[0]:.2f}× | {song_run[1] / dyn[1]:.2f}×, {song_run[1] / whole[1]:.2f}× |")

if __name__ == "__main__":
    main()
