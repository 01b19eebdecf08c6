#!/usr/bin/env python3
"""Renders that read only the zones their notes reach, against renders of the whole font.

Run from the repository root:
    python3 Benchmarks/zone_loading_check.py [--font FONT] [--every N] [--max-length SECONDS]

For every MIDI file of ../shared/corpus outside `Invalid/` (every N-th with --every), it renders
`pianola render --format f32` twice: as users get it (`--load song`: only the instrument zones the
song's notes reach) and with `--load all` (the whole font in memory), and compares the two data
chunks sample by sample. Prints, per font, how many files are identical, how many differ (with
the largest difference in dB below the whole-font render's peak) and how many were refused (too
long for --max-length, not MIDI files).

With an SF3 font the two agree bit for bit; with an SF2 font, FluidSynth keeps each sample loaded
on demand in its own buffer, which changes the last bits of interpolation at sample edges (about
-95 dB and below), so differences there are expected and shown.
"""
import argparse, os, struct, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def data(path):
    """The float samples of a WAV file's data chunk."""
    import numpy
    raw = open(path, "rb").read()
    at = raw.index(b"data")
    size = struct.unpack("<I", raw[at + 4:at + 8])[0]
    return numpy.frombuffer(raw[at + 8:at + 8 + size], dtype="<f4")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--font", default="/usr/share/sounds/sf3/FluidR3Mono_GM.sf3")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--max-length", default="900")
    args = parser.parse_args()
    import render_benchmark as helpers
    helpers.ensure("numpy")
    import numpy
    corpus = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
    if not os.path.isdir(corpus):
        sys.exit(f"the shared corpus is not at {corpus}")
    if not os.path.exists(args.font):
        sys.exit(f"{args.font} not found")
    pianola = os.path.join(helpers.release_binaries("pianola"), "pianola")
    files = sorted(
        os.path.join(folder, name)
        for folder, _, names in os.walk(corpus) if "Invalid" not in folder
        for name in names if name.lower().endswith((".mid", ".kar", ".rmi")))[::args.every]
    with temporary_folder("zones") as work:
        identical, differ, refused, worst = 0, 0, 0, None
        for path in files:
            outputs = []
            for load in ("song", "all"):
                output = os.path.join(work, f"{load}.wav")
                command = [pianola, "render", "-q", "--force", "--format", "f32", "--max-length", args.max_length,
                           "--load", load, "-s", args.font, path, "-o", output]
                if subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
                    break
                outputs.append(data(output))
            if len(outputs) < 2:
                refused += 1
                continue
            song, whole = outputs
            if len(song) == len(whole) and numpy.array_equal(song, whole):
                identical += 1
                continue
            differ += 1
            count = min(len(song), len(whole))
            difference = float(numpy.abs(song[:count] - whole[:count]).max())
            peak = float(numpy.abs(whole).max()) or 1.0
            decibels = 20 * numpy.log10(difference / peak) if difference > 0 else float("-inf")
            worst = decibels if worst is None else max(worst, decibels)
            print(f"differs: {os.path.relpath(path, corpus)}: {len(song)} vs {len(whole)} samples, "
                  f"largest difference {decibels:.1f} dB")
        print(f"{os.path.basename(args.font)}: {len(files)} files, {identical} identical, {differ} differ"
              + (f" (at most {worst:.1f} dB)" if worst is not None else "") + f", {refused} refused")


if __name__ == "__main__":
    main()
