#!/usr/bin/env python3
"""Corpus throughput: `pianola render --manifest --jobs 2` and the Ray driver vs a serial loop of
`fluidsynth -F`, on the same files and font, in one run.

    python3 Benchmarks/corpus_benchmark.py [--files 40] [--pairs 2] [--running-cluster]
        [--no-fluidsynth] [--font FluidR3_GM.sf2] [--corpus ../shared/corpus]

Takes real songs from the shared corpus (drywetmidi's valid files and other test songs) and
renders them (1) with `pianola render --manifest m.jsonl --jobs 2` and (2) with
Examples/RayCorpus/ray_render.py on a local Ray of 2 CPUs (started by the driver, or with
--running-cluster by `ray start --head` before the runs, the driver sent to it), back to back, --pairs times (the
machine's speed drifts over minutes, so each pair is compared within itself), then (3) one after
another with `fluidsynth -ni -F`, each into a fresh folder. Prints audio-seconds rendered per
wall-second for each, the ratios, and pianola's peak memory (one copy of the font per process).
Builds pianola in release mode.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def wav_seconds(path):
    data = open(path, "rb").read(64)
    rate = int.from_bytes(data[24:28], "little")
    block = int.from_bytes(data[32:34], "little")
    return (os.path.getsize(path) - 44) / block / rate


def pick(corpus, count):
    """The first `count` songs over 3 KB among the corpus's well-formed files (drywetmidi's valid
    ones, then the jazz-soft and midly test songs). Left out: drywetmidi's invalid files and its
    format-2 files (MultiSequence), on some of which fluidsynth's player never ends (a WAV past
    12 GB for "MultiSequence/Middle/crixmus.mid", 13 GB for "Invalid Chunk Size/background.mid")."""
    found = []
    for root, _, names in os.walk(corpus):
        if "Invalid" in root or "MultiSequence" in root:
            continue
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.lower().endswith(".mid") and os.path.getsize(path) > 3_000:
                found.append(path)
    return sorted(found)[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=2, help="pianola and Ray runs, back to back")
    parser.add_argument("--running-cluster", action="store_true",
                        help="start Ray (`ray start --head`) before the runs and send the driver to it")
    parser.add_argument("--no-fluidsynth", action="store_true", help="skip the serial fluidsynth loop")
    parser.add_argument("--font", default="/usr/share/sounds/sf2/FluidR3_GM.sf2")
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    args = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    pianola = os.path.join(subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                                          capture_output=True, text=True).stdout.strip(), "pianola")
    files = pick(args.corpus, args.files)
    with temporary_folder("corpus-bench") as work:
        print(f"{len(files)} songs from {args.corpus}, font {args.font}, 44.1 kHz 16-bit WAV, 2 cores")

        def render_pianola(folder):
            """`pianola render --manifest --jobs 2` into `folder`: (wall seconds, peak memory KB)."""
            manifest = os.path.join(work, f"{folder}.jsonl")
            with open(manifest, "w") as handle:
                for index, path in enumerate(files):
                    handle.write(json.dumps({"input": path, "output": f"{folder}/{index:03d}.wav"}) + "\n")
            # (Timed through a small Python parent, whose children's peak memory is pianola's alone.)
            start = time.perf_counter()
            probe = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
                                    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                                    pianola, "render", "-q", "--force", "--manifest", manifest, "--jobs", "2", "-s", args.font],
                                   capture_output=True, text=True)
            return time.perf_counter() - start, int(probe.stdout.strip().splitlines()[-1])

        ray_env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_worker_niceness="0")
        ray_start = None
        if args.running_cluster:
            # A cluster of 2 CPUs on this machine, up before the runs (as a real cluster is when a
            # job is sent to it); its start is timed on its own.
            start = time.perf_counter()
            subprocess.run(["ray", "start", "--head", "--num-cpus", "2", "--include-dashboard", "false"],
                           env=ray_env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ray_start = time.perf_counter() - start

        def render_ray(folder, indices):
            """The Ray driver on a cluster of 2 CPUs into `folder`: wall seconds (with a local Ray's
            start unless --running-cluster)."""
            manifest = os.path.join(work, f"{folder}.jsonl")
            with open(manifest, "w") as handle:
                for index in indices:
                    handle.write(json.dumps({"input": files[index], "output": f"{folder}/{index:03d}.wav"}) + "\n")
            cluster = ["--address", "auto"] if args.running_cluster else ["--cpus", "2"]
            start = time.perf_counter()
            subprocess.run([sys.executable, os.path.join(ROOT, "Examples", "RayCorpus", "ray_render.py"), manifest]
                           + cluster + ["--pianola", pianola, "--", "-s", args.font],
                           stderr=subprocess.DEVNULL, env=ray_env)
            return time.perf_counter() - start

        def audio(folder, indices):
            paths = [os.path.join(work, folder, f"{index:03d}.wav") for index in indices]
            return sum(wav_seconds(path) for path in paths if os.path.exists(path))

        # Pianola and Ray back to back, --pairs times (this machine's speed drifts by several percent
        # over minutes: each pair is compared within itself). The first pianola run also tells which
        # files are readable: fluidsynth gets the same list.
        pairs = []
        pianola_memory = 0
        rendered = None
        for pair in range(args.pairs):
            pianola_time, memory = render_pianola(f"pianola{pair}")
            pianola_memory = max(pianola_memory, memory)
            if rendered is None:
                rendered = [index for index in range(len(files))
                            if os.path.exists(os.path.join(work, f"pianola{pair}", f"{index:03d}.wav"))]
            pianola_audio = audio(f"pianola{pair}", rendered)
            ray_time = render_ray(f"ray{pair}", rendered)
            ray_audio = audio(f"ray{pair}", rendered)
            pairs.append((pianola_time, pianola_audio, ray_time, ray_audio))
            for folder in (f"pianola{pair}", f"ray{pair}"):
                shutil.rmtree(os.path.join(work, folder), ignore_errors=True)

        if args.running_cluster:
            subprocess.run(["ray", "stop"], env=ray_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        # One fluidsynth after another (a file it does not finish in 60 s is left out and said so).
        os.makedirs(os.path.join(work, "fluidsynth"))
        fluid_time = 0.0
        fluid_audio = 0.0
        for index in ([] if args.no_fluidsynth else rendered):
            out = os.path.join(work, "fluidsynth", f"{index:03d}.wav")
            start = time.perf_counter()
            try:
                subprocess.run(["fluidsynth", "-ni", "-q", "-r", "44100", "-F", out, args.font, files[index]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            except subprocess.TimeoutExpired:
                os.unlink(out)
                print(f"fluidsynth did not finish {files[index]} in 60 s: left out of its figures")
                continue
            fluid_time += time.perf_counter() - start
            fluid_audio += wav_seconds(out) if os.path.exists(out) else 0
            os.unlink(out)

        pianola_audio = pairs[0][1]
        print(f"{len(rendered)} files, {pianola_audio / 60:.1f} minutes of audio")
        print("| run | wall s | audio-s per wall-s | vs fluidsynth serial |")
        print("|---|---:|---:|---:|")
        fluid_rate = fluid_audio / fluid_time if fluid_time else float("nan")
        rows = [] if args.no_fluidsynth else [("fluidsynth -F, serial loop", fluid_time, fluid_audio)]
        ray_name = "Ray driver, running cluster of 2 CPUs" if args.running_cluster else \
            "Ray driver, local cluster of 2 CPUs, incl. Ray start"
        for pair, (pianola_time, pianola_audio, ray_time, ray_audio) in enumerate(pairs, 1):
            rows += [(f"pianola render --manifest --jobs 2 (pair {pair})", pianola_time, pianola_audio),
                     (f"{ray_name} (pair {pair})", ray_time, ray_audio)]
        for name, seconds, rendered_audio in rows:
            versus = "—" if args.no_fluidsynth else f"{rendered_audio / seconds / fluid_rate:.2f}×"
            print(f"| {name} | {seconds:.1f} | {rendered_audio / seconds:.1f} | {versus} |")
        ratios = [ray_audio / ray_time / (pianola_audio / pianola_time) for pianola_time, pianola_audio, ray_time, ray_audio in pairs]
        pooled = (sum(pair[3] for pair in pairs) / sum(pair[2] for pair in pairs)) / (
            sum(pair[1] for pair in pairs) / sum(pair[0] for pair in pairs))
        print("\nRay vs --jobs 2, per pair: " + ", ".join(f"{ratio:.2f}×" for ratio in ratios)
              + f"; all pairs together: {pooled:.2f}× the throughput")
        if ray_start is not None:
            print(f"(`ray start --head --num-cpus 2` took {ray_start:.1f} s, before the runs)")
        print(f"pianola --jobs 2 peak memory: {pianola_memory / 1024:.0f} MB (font file {os.path.getsize(args.font) / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
