#!/usr/bin/env python3
"""Peak memory on a 16-track, 1-million-note song: `pianola info` and `pianola render` against
`fluidsynth -F` (and symusic's parse, for `info`) on the same file.

Run from the repository root:  python3 Benchmarks/large_song_memory_benchmark.py [--notes N]

It builds `pianola` and the parse benchmark's generator in release mode and generates a format-1
file: a conductor track (859 tempo changes) and 16 parts of 62 500 notes each, 8 MB, 126 minutes.
Peak resident memory is each child's own ru_maxrss (wait4). The two renders, 126 minutes of
audio each with the bundled SoundFont at 44.1 kHz, raw 16-bit output to a scratch folder, run at
the same time (one core each): about 20 minutes on this machine; their times are printed but are
not a speed comparison (they share the machine).
"""
import argparse, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from render_benchmark import release_binaries  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402


def start(command):
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), time.perf_counter()


def finish(started, command):
    process, began = started
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(command)}")
    return time.perf_counter() - began, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--info-only", action="store_true",
                        help="skip the two renders (126 minutes of audio each, some 13 minutes)")
    args = parser.parse_args()
    bin_path = release_binaries("pianola", "parse-benchmark")
    pianola = os.path.join(bin_path, "pianola")
    font = os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2")
    with temporary_folder("memory-bench") as work:
        song = os.path.join(work, "song.mid")
        subprocess.check_call([os.path.join(bin_path, "parse-benchmark"), "generate", song, "--notes",
                               str(args.notes)], stdout=subprocess.DEVNULL)
        print(f"song: {args.notes} notes, {os.path.getsize(song) / 1e6:.1f} MB")
        rows = []
        for label, command in (
            ("pianola info --json", [pianola, "info", "--json", song]),
            ("pianola info --json --jobs 1", [pianola, "info", "--json", "--jobs", "1", song]),
            ("symusic Score.from_midi (Python process)",
             [sys.executable, "-c", "import sys, symusic\nsymusic.Score.from_midi(open(sys.argv[1], 'rb').read())",
              song]),
        ):
            rows.append((label,) + finish(start(command), command))
        renders = [
            ("pianola render", [pianola, "render", "-q", "--force", song, "-o", os.path.join(work, "p.raw"), "--soundfont", font,
                                "--max-length", "10000"]),
            ("fluidsynth -F", ["fluidsynth", "-q", "-n", "-i", "-F", os.path.join(work, "f.raw"), "-T", "raw", "-r",
                               "44100", font, song]),
        ]
        running = [] if args.info_only else [(label, command, start(command)) for label, command in renders]
        for label, command, started in running:
            rows.append((label,) + finish(started, command))
        print("\n| what | seconds | peak RSS MB |\n|---|---:|---:|")
        for label, seconds, megabytes in rows:
            print(f"| {label} | {seconds:.2f} | {megabytes:.1f} |")
        memory = {label: megabytes for label, _, megabytes in rows}
        if args.info_only:
            print(f"\ninfo: {memory['pianola info --json'] / memory['symusic Score.from_midi (Python process)']:.2f}× "
                  f"symusic's peak RSS")
            return
        print(f"\nrender: pianola {memory['pianola render'] / memory['fluidsynth -F']:.2f}× fluidsynth's peak RSS; "
              f"info: {memory['pianola info --json'] / memory['fluidsynth -F']:.2f}× fluidsynth's render, "
              f"{memory['pianola info --json'] / memory['symusic Score.from_midi (Python process)']:.2f}× symusic's")


if __name__ == "__main__":
    main()
