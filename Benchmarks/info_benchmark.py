#!/usr/bin/env python3
"""`pianola info --json` end to end, side by side with symusic on the same bytes.

Run from the repository root:  python3 Benchmarks/info_benchmark.py [--repeat N]

It builds `pianola` in release mode, generates a large file (400 000 notes, 16 tracks, 3.2 MB) with
the parse benchmark's generator, and times three sets, best of N runs each:

- large: that one file;
- ten copies: ten copies of it in one invocation (the case the issue measured);
- many small: the files of ../shared/corpus that symusic accepts, copied until there are at least
  1 000 (skipped with a message when the corpus is absent).

Pianola is timed as a user waits for it: one `pianola info --json FILES... > /dev/null` process,
start-up included. symusic is timed twice: `Score.from_midi(open(path).read())` in an already
running Python with symusic imported (its parse alone, the harder bar), and as a process that
imports it and parses the same files (end to end, like Pianola). Throughput is the files' bytes
over the time; the ratios are symusic's time over Pianola's (above 1: Pianola is faster).
"""
import argparse, glob, os, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from render_benchmark import ensure, release_binaries  # noqa: E402


def best_process(repeats, command):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def peak_rss_kb(command):
    """Peak RSS of a child process (GNU time's %M), in kilobytes."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    return int(result.stderr.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ensure("symusic")
    import symusic

    bin_path = release_binaries("pianola", "parse-benchmark")
    pianola = os.path.join(bin_path, "pianola")
    with temporary_folder("info-bench") as work:
        large = os.path.join(work, "large.mid")
        subprocess.check_call([os.path.join(bin_path, "parse-benchmark"), "generate", large, "--notes", "400000"],
                              stdout=subprocess.DEVNULL)
        copies = []
        for index in range(10):
            copies.append(os.path.join(work, f"copy{index}.mid"))
            shutil.copyfile(large, copies[-1])
        sets = [("large (1 file)", [large]), ("ten copies", copies)]
        candidates = sorted(glob.glob(os.path.join(CORPUS, "**", "*.mid"), recursive=True))
        accepted = []
        for path in candidates:
            try:
                symusic.Score.from_midi(open(path, "rb").read())
                accepted.append(path)
            except Exception:
                pass
        if accepted:
            small = []
            folder = os.path.join(work, "small")
            os.mkdir(folder)
            while len(small) < 1000:
                for path in accepted:
                    small.append(os.path.join(folder, f"{len(small)}.mid"))
                    shutil.copyfile(path, small[-1])
            sets.append((f"many small ({len(accepted)} corpus files)", small))
        else:
            print(f"info benchmark: {CORPUS} not found; the many-small-files set is skipped")

        print("| set | files | MB | pianola s | pianola MB/s | symusic parse s | symusic process s "
              "| vs symusic parse | vs symusic process |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label, files in sets:
            size = sum(os.path.getsize(path) for path in files)
            ours = best_process(args.repeat, [pianola, "info", "--json"] + files)
            parse = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                for path in files:
                    with open(path, "rb") as handle:
                        symusic.Score.from_midi(handle.read())
                parse = min(parse, time.perf_counter() - start)
            script = ("import sys, symusic\nfor p in sys.argv[1:]:\n"
                      "    symusic.Score.from_midi(open(p, 'rb').read())")
            process = best_process(args.repeat, [sys.executable, "-c", script] + files)
            print(f"| {label} | {len(files)} | {size / 1e6:.1f} | {ours:.3f} | {size / ours / 1e6:.0f} | {parse:.3f} | "
                  f"{process:.3f} | {parse / ours:.2f}× | {process / ours:.2f}× |")
        ours_kb = peak_rss_kb([pianola, "info", "--json", large])
        theirs_kb = peak_rss_kb([sys.executable, "-c", "import sys, symusic\n"
                                 "symusic.Score.from_midi(open(sys.argv[1], 'rb').read())", large])
        print(f"\npeak RSS on the large file: pianola {ours_kb / 1024:.1f} MB, symusic process {theirs_kb / 1024:.1f} MB")


if __name__ == "__main__":
    main()
