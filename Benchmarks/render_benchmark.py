#!/usr/bin/env python3
"""Render speed: `pianola render` side by side with `fluidsynth -F`, in one run.

Run from the repository root:  python3 Benchmarks/render_benchmark.py [--runs N] [--quick]

Generates its MIDI files with mido (seeded, like the reference notes' dense16/piano files),
builds pianola in release mode, and times, best of N runs each, on the same file, font and rate:
  1. one file, one thread: pianola render vs fluidsynth -F (reverb/chorus on, FluidSynth defaults);
  2. one file, --threads 2 vs fluidsynth -F;
  3. twenty files, --jobs 2 vs a serial loop of fluidsynth -F;
  4. time to the first rendered sample (a one-note file: start-up and SoundFont load).
Fonts: Debian's FluidR3_GM (fluid-soundfont-gm) and Pianola's bundled font.
"""
import argparse, os, random, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

def ensure(package):
    try:
        __import__(package)
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", package])

def release_binaries(*products):
    """Builds `products` in release mode; returns the folder that holds them."""
    for product in products:
        subprocess.check_call(["swift", "build", "-c", "release", "--product", product], cwd=ROOT,
                              stdout=subprocess.DEVNULL)
    return subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                                   text=True).strip()

def dense16(path, seconds=180, seed=1):
    import mido
    rng = random.Random(seed)
    mf = mido.MidiFile(ticks_per_beat=480)
    programs = [0, 4, 24, 32, 40, 48, 56, 61, 65, 73, 80, 88, 11, 19, 33]
    beats = int(seconds * 2)
    for channel in range(16):
        track = mido.MidiTrack(); mf.tracks.append(track)
        events = []
        if channel != 9:
            events.append((0, mido.Message("program_change", channel=channel, program=programs[channel % len(programs)])))
        for beat in range(beats):
            for sub in range(2 if channel in (9, 1, 2) else 1):
                start = beat * 480 + sub * 240 + rng.randrange(0, 20)
                if channel == 9:
                    key = rng.choice([36, 38, 42, 42, 46, 49, 51])
                else:
                    key = 36 + (channel * 5 + rng.randrange(0, 36)) % 60
                length = rng.randrange(120, 900 if channel in (5, 11) else 480)
                events.append((start, mido.Message("note_on", channel=channel, note=key, velocity=rng.randrange(50, 120))))
                events.append((start + length, mido.Message("note_off", channel=channel, note=key, velocity=0)))
            if beat % 4 == 0 and channel != 9:
                events.append((beat * 480, mido.Message("control_change", channel=channel, control=1, value=rng.randrange(0, 127))))
                events.append((beat * 480 + 10, mido.Message("pitchwheel", channel=channel, pitch=rng.randrange(-2000, 2000))))
        events.sort(key=lambda e: (e[0], 0 if e[1].type == "note_off" else 1))
        last = 0
        for tick, message in events:
            track.append(message.copy(time=tick - last)); last = tick
    mf.save(path)

def short_piece(path, seed):
    import mido
    rng = random.Random(seed)
    mf = mido.MidiFile(ticks_per_beat=480); track = mido.MidiTrack(); mf.tracks.append(track)
    track.append(mido.Message("program_change", program=rng.randrange(0, 100), time=0))
    for _ in range(60):
        key = rng.randrange(48, 84)
        track.append(mido.Message("note_on", note=key, velocity=90, time=rng.choice([0, 240, 480])))
        track.append(mido.Message("note_off", note=key, velocity=0, time=rng.randrange(120, 480)))
    mf.save(path)

def one_note(path):
    import mido
    mf = mido.MidiFile(ticks_per_beat=480); track = mido.MidiTrack(); mf.tracks.append(track)
    track.append(mido.Message("note_on", note=60, velocity=90, time=0))
    track.append(mido.Message("note_off", note=60, velocity=0, time=240))
    mf.save(path)

def wav_seconds(path):
    import wave
    with wave.open(path) as w:
        return w.getnframes() / w.getframerate()

def best(runs, command):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="60 s dense file, 10 short files")
    args = parser.parse_args()
    ensure("mido")
    if shutil.which("fluidsynth") is None:
        sys.exit("render_benchmark: install Debian's fluidsynth (apt-get install fluidsynth fluid-soundfont-gm)")
    subprocess.check_call(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, stdout=subprocess.DEVNULL)
    pianola = os.path.join(subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, text=True).strip(), "pianola")
    with temporary_folder("bench") as work:
        dense = os.path.join(work, "dense16.mid"); dense16(dense, 60 if args.quick else 180)
        note = os.path.join(work, "one-note.mid"); one_note(note)
        shorts = []
        for index in range(10 if args.quick else 20):
            path = os.path.join(work, f"piece{index:02}.mid"); short_piece(path, index); shorts.append(path)
        fonts = [("FluidR3_GM", "/usr/share/sounds/sf2/FluidR3_GM.sf2"), ("PianolaGM", os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"))]
        out = os.path.join(work, "out.wav"); outdir = os.path.join(work, "renders")
        rows = []
        for name, font in fonts:
            if not os.path.exists(font):
                print(f"skipping {name}: {font} not found"); continue
            fs = ["fluidsynth", "-ni", "-q", "-F", out, "-r", "44100", font]
            pn = [pianola, "render", "-q", "--force", "--soundfont", font, "--rate", "44100", "-o", out]
            t_fs = best(args.runs, fs + [dense]); fs_seconds = wav_seconds(out)
            t_pn = best(args.runs, pn + [dense]); pn_seconds = wav_seconds(out)
            rows.append((name, f"dense16, 1 thread (output {fs_seconds:.1f} s vs {pn_seconds:.1f} s)", t_fs, t_pn, fs_seconds / t_fs, pn_seconds / t_pn))
            t_pn2 = best(args.runs, pn + ["--threads", "2", dense])
            rows.append((name, "dense16, pianola --threads 2", t_fs, t_pn2, fs_seconds / t_fs, pn_seconds / t_pn2))
            def serial_fs():
                for path in shorts:
                    subprocess.run(fs + [path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times = []
            for _ in range(args.runs):
                start = time.perf_counter(); serial_fs(); times.append(time.perf_counter() - start)
            t_fs_serial = min(times)
            t_jobs = best(args.runs, [pianola, "render", "-q", "--force", "--soundfont", font, "--rate", "44100", "--jobs", "2", "-o", outdir] + shorts)
            rows.append((name, f"{len(shorts)} files, pianola --jobs 2 vs serial fluidsynth", t_fs_serial, t_jobs, None, None))
            t_fs_first = best(args.runs + 2, fs + [note]); t_pn_first = best(args.runs + 2, pn + ["--tail", "0", note])
            rows.append((name, "one-note file (start-up + font load)", t_fs_first, t_pn_first, None, None))
        print("| font | case | fluidsynth s | pianola s | speed-up (wall) | fluidsynth × real time | pianola × real time | speed-up (audio s per s) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for name, case, a, b, rtf_a, rtf_b in rows:
            extra = f"{rtf_a:.1f} | {rtf_b:.1f} | {rtf_b / rtf_a:.2f}×" if rtf_a else " | | "
            print(f"| {name} | {case} | {a:.3f} | {b:.3f} | {a / b:.2f}× | {extra} |")

if __name__ == "__main__":
    main()
