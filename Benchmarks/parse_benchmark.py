#!/usr/bin/env python3
"""SMF parse throughput: Pianola's reader side by side with symusic (C++) and mido (Python).

Run from the repository root:  python3 Benchmarks/parse_benchmark.py [--repeat N]

It builds the Swift benchmark in release mode, generates a large file (400 000 notes, 16 channels),
and parses (1) the corpus files that every parser accepts and (2) the large file, taking the best of
N runs for each parser in the same session. Bytes are read into memory first, so only parsing is
timed. Events are counted once, by Pianola's reader, and used as the numerator for every parser.
Memory: Pianola's resident-set growth while holding the parsed large file, against the size of
its event arrays; symusic's and mido's peak RSS are measured in child processes for reference.
"""
import argparse, glob, io, json, os, resource, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")

def ensure(package):
    try:
        __import__(package)
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", package])

def best_of(repeats, parse, blobs):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for blob in blobs:
            parse(blob)
        best = min(best, time.perf_counter() - start)
    return best

def child_peak_rss(code, path):
    """Peak RSS (bytes) of a fresh Python process that parses `path` with `code`."""
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec from this (large) parent.
    script = (f"import sys\nd=open(sys.argv[1],'rb').read()\n{code}\n"
              "print([int(l.split()[1])*1024 for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    return int(subprocess.check_output([sys.executable, "-c", script, path]).split()[-1])

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--notes", type=int, default=400_000)
    args = parser.parse_args()
    ensure("symusic"); ensure("mido")
    import symusic, mido

    subprocess.check_call(["swift", "build", "-c", "release", "--product", "parse-benchmark"], cwd=ROOT,
                          stdout=subprocess.DEVNULL)
    binary = os.path.join(subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, text=True).strip(), "parse-benchmark")
    large = os.path.join(ROOT, ".build", "benchmark-large.mid")
    subprocess.check_call([binary, "generate", large, "--notes", str(args.notes)], stdout=subprocess.DEVNULL)

    candidates = sorted(glob.glob(os.path.join(CORPUS, "drywetmidi", "Valid", "**", "*.mid"), recursive=True))
    candidates += sorted(glob.glob(os.path.join(CORPUS, "midly-test-asset", "*.mid")))
    accepted, excluded = [], []
    for path in candidates:
        data = open(path, "rb").read()
        try:
            symusic.Score.from_midi(data); mido.MidiFile(file=io.BytesIO(data))
            accepted.append(path)
        except Exception as error:  # a file some parser refuses is left out for all of them
            excluded.append((os.path.basename(path), type(error).__name__))

    parsers = {
        "symusic": lambda blob: symusic.Score.from_midi(blob),
        "mido": lambda blob: mido.MidiFile(file=io.BytesIO(blob)),
    }
    rows = []
    for label, files, mido_repeats in (("corpus", accepted, max(1, args.repeat // 2)), ("large", [large], 1)):
        blobs = [open(path, "rb").read() for path in files]
        ours = json.loads(subprocess.check_output([binary, "run", "--repeat", str(args.repeat)] + files))
        size, events = ours["bytes"], ours["events"]
        timings = {"pianola": ours["seconds"]}
        timings["symusic"] = best_of(args.repeat, parsers["symusic"], blobs)
        timings["mido"] = best_of(mido_repeats, parsers["mido"], blobs)
        for name, seconds in timings.items():
            rows.append((label, name, len(files), size, events, seconds))
        if label == "large":
            memory = {"pianola_event_array_bytes": ours["eventArrayBytes"], "pianola_rss_growth_bytes": ours["residentDeltaBytes"],
                      "event_stride": ours["eventStride"]}

    memory["symusic_peak_rss_bytes"] = child_peak_rss("import symusic; s=symusic.Score.from_midi(d)", large)
    memory["python_baseline_rss_bytes"] = child_peak_rss("pass", large)
    memory["mido_peak_rss_bytes"] = child_peak_rss("import mido,io; m=mido.MidiFile(file=io.BytesIO(d))", large)

    print(f"files: {len(accepted)} corpus files accepted by every parser; excluded: {excluded}")
    print()
    print("| set | parser | files | MB | events | best s | MB/s | Mevents/s | vs symusic |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    reference = {row[0]: row[5] for row in rows if row[1] == "symusic"}
    for label, name, count, size, events, seconds in rows:
        print(f"| {label} | {name} | {count} | {size / 1e6:.2f} | {events} | {seconds:.4f} | {size / seconds / 1e6:.1f} | "
              f"{events / seconds / 1e6:.2f} | {reference[label] / seconds:.2f}× |")
    print()
    mb = lambda value: f"{value / 1e6:.1f} MB"
    print(f"memory (large file): Pianola event arrays {mb(memory['pianola_event_array_bytes'])} "
          f"({memory['event_stride']} B/event), Pianola RSS growth {mb(memory['pianola_rss_growth_bytes'])} "
          f"= {memory['pianola_rss_growth_bytes'] / memory['pianola_event_array_bytes']:.2f}× the arrays; "
          f"symusic process peak {mb(memory['symusic_peak_rss_bytes'])}, mido {mb(memory['mido_peak_rss_bytes'])} "
          f"(Python alone {mb(memory['python_baseline_rss_bytes'])})")

if __name__ == "__main__":
    main()
