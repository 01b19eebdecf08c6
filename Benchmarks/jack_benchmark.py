#!/usr/bin/env python3
"""JACK playback CPU: `pianola play --driver jack` side by side with `fluidsynth -a jack`, in one run.

Run from the repository root:

    python3 Benchmarks/jack_benchmark.py [--runs N] [--seconds S]

A private JACK server (`jackd -r -d dummy -r 48000 -p 256`, Debian jackd2; the dummy driver is
paced by the clock like a sound card) is started for the run. Both players play the same
generated dense General MIDI file (dense16 of render_benchmark.py: 16 channels, about 40 voices
sounding) with the same SoundFont, as JACK clients connected to the server's playback ports, and
the CPU time (user + system) of each whole process, start-up and SoundFont load included, is read
from the kernel (wait4), divided by the audio's length; best of N runs each. The xruns the server
reports to pianola are given beside it (FluidSynth's JACK driver does not report them).
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

from playback_benchmark import best_of  # noqa: E402


def start_server(name):
    """A private jackd with the dummy driver, once it takes clients."""
    environment = dict(os.environ, JACK_NO_AUDIO_RESERVATION="1")
    server = subprocess.Popen(["jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "256"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    for _ in range(100):
        listed = subprocess.run(["jack_lsp", "-s", name], capture_output=True, text=True)
        if "system:playback_1" in listed.stdout:
            return server
        time.sleep(0.05)
    server.terminate()
    raise SystemExit("jackd did not start (install jackd2: scripts/install-deps --test)")


def measure(pianola, font, song, server, runs):
    fluidsynth = ["fluidsynth", "-ni", "-a", "jack", "-o", f"audio.jack.server={server}", "-o",
                  "audio.jack.autoconnect=1", "-o", "audio.jack.id=fluidsynth", "-r", "48000", font, song]
    player = [pianola, "play", song, "-s", font, "--driver", "jack"]
    os.environ["JACK_DEFAULT_SERVER"] = server
    return best_of((("fluidsynth", fluidsynth), ("pianola", player)), runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=30, help="length of the dense file")
    args = parser.parse_args()

    import render_benchmark

    render_benchmark.ensure("mido")
    subprocess.run(["swift", "build", "-c", "release", "--product", "pianola"], cwd=ROOT, check=True)
    binaries = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    with temporary_folder("jack-benchmark") as work:
        pianola = os.path.join(binaries, "pianola")
        song = os.path.join(work, "dense16.mid")
        render_benchmark.dense16(song, args.seconds)

        import mido

        audio_seconds = mido.MidiFile(song).length
        name = f"pianola-benchmark-{os.getpid()}"
        server = start_server(name)
        try:
            fonts = [("FluidR3_GM", "/usr/share/sounds/sf2/FluidR3_GM.sf2"),
                     ("TimGM6mb", "/usr/share/sounds/sf2/TimGM6mb.sf2"),
                     ("PianolaGM", os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"))]
            print(f"dense16, {audio_seconds:.1f} s of audio, jackd -d dummy at 48 kHz, period 256, best of {args.runs}")
            print("| font | fluidsynth CPU s per audio s | pianola CPU s per audio s | pianola / fluidsynth |"
                  " xruns (fluidsynth / pianola) |")
            print("|---|---:|---:|---:|---|")
            for label, font in fonts:
                if not os.path.exists(font):
                    print(f"| {label} | (missing: {font}) | | | |")
                    continue
                best = measure(pianola, font, song, name, args.runs)
                fs, pn = best["fluidsynth"][0] / audio_seconds, best["pianola"][0] / audio_seconds
                print(f"| {label} | {fs:.4f} | {pn:.4f} | {pn / fs:.2f}× | {best['fluidsynth'][1]} / {best['pianola'][1]} |",
                      flush=True)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
