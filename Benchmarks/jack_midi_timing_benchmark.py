#!/usr/bin/env python3
"""JACK MIDI input timing: `pianola live --driver jack` beside `fluidsynth -a jack -m jack`, in one run.

Run from the repository root:

    python3 Benchmarks/jack_midi_timing_benchmark.py [--seconds S] [--periods 256,1024]
                                                    [--scratch-path .build-bench] [--no-build]

For each period size, a private JACK server (`jackd -r -d dummy -r 48000 -p PERIOD`, Debian
jackd2; the dummy driver is paced by the clock like a sound card) is started, and on it:
  - `jack_midiseq seq ...` (jackd2's example client): a loop of LOOP frames with a note at each of
    OFFSETS, every event written at its exact frame inside the JACK period. The loop and the
    offsets are not multiples of 64 or of the period, so the notes fall everywhere in a period;
  - `pianola live --driver jack --connect seq` and `fluidsynth -a jack -m jack` (the same font,
    reverb and chorus off, channel 1 set to the drum kit's side stick: a short sound with a sharp
    start and digital silence between the notes), both fed by `seq:out`, so the two players get
    the same events in the same cycles;
  - `jack_capture`, recording both players' outputs into one 4-channel file for S seconds.
Each note's onset (the first sample above -60 dB of the peak after at least GAP frames below it)
is placed against the sequencer's grid: its timing error is the onset's frame minus the note's
frame in the loop, up to one constant (the latency, unknown and the same for every note). The
spread of these errors (max - min, standard deviation) is what the players add to the
sequencer's frame-exact timing. FluidSynth starts notes on its 64-frame block, so up to 63
frames of spread remain for any player built on it, Pianola included: that is the floor.
FluidSynth's JACK driver hands a period's events to the synthesizer before rendering the period,
without their frames, so its notes start on the period's first frame: up to a period of spread.

An xrun can make a client miss a cycle, which shifts the rest of the recording (jack_capture)
or of the sequence (jack_midiseq) by a whole period, and can lose that cycle's events for a
player; such shifts are found from pianola's errors (within one block otherwise) and the table
counts the longest stretch of notes without one. Xruns are counted by jackd (its log during the
capture: cycles, and the clients late in them), by jack_capture, and by pianola over its session
(FluidSynth's JACK driver does not report them). FluidSynth runs with its shell on a pipe: `-i`
(no shell) would end it at once without a MIDI file to play, and `-n` leaves out the MIDI driver.
"""
import argparse
import os
import re
import signal
import struct
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402
RATE = 48000
LOOP = 22153                        # frames; 22153 mod 1024 = 649, mod 256 = 137, mod 64 = 9
OFFSETS = [0, 5417, 10979, 16661]   # note starts in the loop (gaps 5417 to 5682 frames)
NOTE_FRAMES = 1200                  # note-on to note-off
KEY = 37                            # side stick, in the drum kit (bank 128, program 0): 2400 frames
THRESHOLD = 1e-3                    # onset: above -60 dB of the recording's peak ...
GAP = 1000                          # ... after at least this many frames below it


def jack(command, server, **options):
    environment = dict(os.environ, JACK_DEFAULT_SERVER=server)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=10, **options)


def ports(server):
    """The server's ports: {name: type line}."""
    listed = jack(["jack_lsp", "-t"], server).stdout.splitlines()
    return {name: kind.strip() for name, kind in zip(listed[::2], listed[1::2])}


def wait_for(server, names, seconds=30, processes=()):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        present = ports(server)
        if all(name in present for name in names):
            return present
        for label, process in processes:
            if process.poll() is not None:
                raise SystemExit(f"{label} exited ({process.returncode}) before its JACK ports appeared")
        time.sleep(0.1)
    raise SystemExit(f"JACK ports did not appear within {seconds} s: {names}")


class Session:
    """A private jackd and its clients; `close()` ends the clients, then the server with SIGTERM
    (never SIGKILL: a killed jackd leaves its shared memory behind, and later servers fail)."""

    def __init__(self, name, period, work):
        self.name, self.work, self.period, self.clients = name, work, period, []
        self.server_log_path = os.path.join(work, f"jackd-{period}.log")
        self.server_log = open(self.server_log_path, "w")
        environment = dict(os.environ, JACK_NO_AUDIO_RESERVATION="1")
        environment.pop("JACK_DEFAULT_SERVER", None)
        self.server = subprocess.Popen(
            ["jackd", "-n", name, "-r", "-d", "dummy", "-r", str(RATE), "-p", str(period)],
            stdout=self.server_log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
        try:
            for _ in range(200):
                if self.server.poll() is not None:
                    raise SystemExit(f"jackd exited ({self.server.returncode}): see {self.server_log_path}"
                                     " (install jackd2: scripts/install-deps --test)")
                if "system:playback_1" in jack(["jack_lsp"], name).stdout:
                    return
                time.sleep(0.05)
            raise SystemExit("jackd did not start within 10 s")
        except BaseException:
            self.close()
            raise

    def start(self, label, command, **options):
        environment = dict(os.environ, JACK_DEFAULT_SERVER=self.name)
        log = open(os.path.join(self.work, f"{label}-{self.period}.log"), "w")
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                   start_new_session=True, **options)
        self.clients.append((label, process, log))
        return process

    def log_size(self):
        self.server_log.flush()
        return os.path.getsize(self.server_log_path)

    def server_log_text(self, start=0, end=None):
        with open(self.server_log_path, errors="replace") as file:
            file.seek(start)
            return file.read() if end is None else file.read(end - start)

    def close(self):
        for label, process, log in reversed(self.clients):
            if process.poll() is None:
                if label == "fluidsynth" and process.stdin:
                    try:
                        process.stdin.write(b"quit\n")
                        process.stdin.close()
                    except OSError:
                        pass
                else:
                    process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()  # a client, never the server
                    process.wait(timeout=10)
            log.close()
        self.clients = []
        if self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                print(f"warning: jackd (pid {self.server.pid}) did not stop on SIGTERM; left running",
                      file=sys.stderr)
        self.server_log.close()


def read_float_wav(path):
    """The samples of a 32-bit float WAV (plain or WAVE_FORMAT_EXTENSIBLE), as frames x channels."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise SystemExit(f"{path}: not a WAV file")
    position, layout, samples = 12, None, None
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        body = data[position + 8:position + 8 + size]
        if chunk == b"fmt ":
            tag, channels, _, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if tag == 0xFFFE:
                tag = struct.unpack("<H", body[24:26])[0]
            layout = (tag, channels, bits)
        elif chunk == b"data":
            samples = body
        position += 8 + size + (size & 1)
    if layout is None or samples is None or layout[0] != 3 or layout[2] != 32:
        raise SystemExit(f"{path}: expected 32-bit float samples, found {layout}")
    count = len(samples) // (4 * layout[1])
    return np.frombuffer(samples[:count * 4 * layout[1]], dtype="<f4").reshape(count, layout[1])


def onsets(stereo):
    """Frames where a note starts: the first sample above THRESHOLD of the peak after GAP frames
    below it (the recording's first sound is left out unless silence precedes it)."""
    level = np.abs(stereo).max(axis=1)
    peak = float(level.max())
    if peak <= 0:
        return np.array([], dtype=np.int64), peak
    loud = np.flatnonzero(level > peak * THRESHOLD)
    starts = loud[np.concatenate(([loud[0] >= GAP], np.diff(loud) > GAP))]
    return starts.astype(np.int64), peak


def match(starts, shift=None):
    """Each onset to the nearest note of the sequencer's grid (notes are over 5400 frames apart, an
    error is at most a period or two): the grid's shift (frame of the loop's start, modulo the
    loop, in the recording); {(loop, note): (onset, error)}, the error being the onset's frame minus
    the note's, up to the constant latency; and the onsets that fell on a note already taken.
    Without `shift`, the one that puts the most onsets within 1100 frames of their note."""
    offsets = np.array(OFFSETS)

    def nearest(shift):
        phase = (starts[:, None] - offsets[None, :] - shift) % LOOP
        phase = np.where(phase > LOOP // 2, phase - LOOP, phase)  # signed, -LOOP/2 ... LOOP/2
        note = np.abs(phase).argmin(axis=1)
        return note, phase[np.arange(len(starts)), note]

    if shift is None:
        best = None
        for candidate in {int((start - offset) % LOOP) for start in starts[:8] for offset in offsets}:
            _, error = nearest(candidate)
            close = np.abs(error) <= 1100
            score = (int(close.sum()), -float(np.abs(error[close]).sum()))
            if best is None or score > best[0]:
                best = (score, candidate)
        shift = best[1]
    note, error = nearest(shift)
    loop = (starts - error - offsets[note] - shift) // LOOP
    matched, duplicates = {}, 0
    for event, onset, late in zip(zip(loop.tolist(), note.tolist()), starts.tolist(), error.tolist()):
        if event in matched:
            duplicates += 1
        else:
            matched[event] = (onset, late)
    return shift, matched, duplicates


def expected_events(shift, length, period):
    """The (loop, note) pairs of the grid far enough inside a recording of `length` frames that
    their onsets can be detected whatever the player's latency."""
    margin = 2 * (period + 256)
    return {(loop, note) for note, offset in enumerate(OFFSETS) for loop in range(-1, length // LOOP + 2)
            if GAP + margin <= shift + offset + loop * LOOP <= length - margin - 3000}


def longest_stretch(pianola, fluidsynth, period):
    """The longest run of notes without a whole-period shift, and how many shifts there were.

    An xrun can make a client miss a cycle: jack_capture (the rest of the recording comes a period
    early), jack_midiseq (the rest of the sequence a period late) or a player. Pianola's errors
    lie within one 64-frame block, so a jump of more than half a period between its notes is such
    a shift; a note that fluidsynth plays more than a period before pianola, or after it, is
    another (they get each event in the same cycle: fluidsynth at the period's start, pianola at
    its frame)."""
    runs, band, step, reference = [[]], None, None, None
    for event in sorted(set(pianola) | set(fluidsynth)):
        previous = (band, step)
        if event in pianola:  # which period-wide band pianola's error is in, from its first note's
            reference = pianola[event][1] if reference is None else reference
            band = round((pianola[event][1] - reference) / period)
        if event in pianola and event in fluidsynth:
            ahead = pianola[event][0] - fluidsynth[event][0]
            step = 0 if 0 <= ahead <= period else ahead // period
        if None not in previous and (band, step) != previous:
            runs.append([])
        runs[-1].append(event)
    return max(runs, key=len), len(runs) - 1


def describe(errors):
    errors = np.array(errors)
    return {"count": len(errors), "range": int(errors.max() - errors.min()), "std": float(errors.std())}


def xrun_lines(text):
    """jackd's xruns in its log: the cycles it reports (\"Process error\") and, by client, how
    often each was the one not finished in time."""
    counts = {}
    for client in re.findall(r"JackEngine::XRun: client = (.+?) was not finished", text):
        counts[client] = counts.get(client, 0) + 1
    return len(re.findall(r"ProcessGraphAsyncMaster: Process error", text)), counts


def run(pianola, font, period, seconds, work):
    name = f"pianola-midi-timing-{os.getpid()}-{period}"
    session = Session(name, period, work)
    try:
        sequence = [str(value) for offset in OFFSETS for value in (offset, KEY, NOTE_FRAMES)]
        sequencer = session.start("seq", ["jack_midiseq", "seq", str(LOOP)] + sequence)
        wait_for(session.name, ["seq:out"], processes=[("jack_midiseq", sequencer)])
        fluidsynth = session.start(
            "fluidsynth",
            ["fluidsynth", "-a", "jack", "-m", "jack", "-o", f"audio.jack.server={name}", "-o",
             f"midi.jack.server={name}", "-o", "audio.jack.id=fluidsynth", "-o", "midi.jack.id=fluidsynth",
             "-o", "audio.jack.autoconnect=0", "-r", str(RATE), "-R", "0", "-C", "0", font],
            stdin=subprocess.PIPE)
        # The shell on a pipe keeps fluidsynth running; channel 1 gets the drum kit, as --program.
        fluidsynth.stdin.write(b"select 0 1 128 0\n")
        fluidsynth.stdin.flush()
        player = session.start(
            "pianola",
            [pianola, "live", "--driver", "jack", "--connect", "seq", "--no-autoconnect", "-s", font,
             "--synth-reverb", "off", "--synth-chorus", "off", "--program", "1:128:0"],
            stdin=subprocess.DEVNULL)
        present = wait_for(session.name, ["pianola:midi_in", "pianola:out_1", "pianola:out_2",
                                          "fluidsynth:left", "fluidsynth:right"],
                           processes=[("pianola", player), ("fluidsynth", fluidsynth)])
        midi_inputs = [port for port in present if port.startswith("fluidsynth:") and "midi" in present[port]]
        if not midi_inputs:
            raise SystemExit(f"no MIDI input port of fluidsynth among {sorted(present)}")
        connected = jack(["jack_connect", "seq:out", midi_inputs[0]], session.name)
        if connected.returncode != 0:
            raise SystemExit(f"jack_connect seq:out {midi_inputs[0]}: {connected.stderr.strip()}")
        for _ in range(100):  # pianola connects itself (--connect seq) once its session starts
            if "seq:out" in jack(["jack_lsp", "-c", "pianola:midi_in"], session.name).stdout:
                break
            time.sleep(0.1)
        else:
            raise SystemExit("pianola:midi_in was not connected to seq:out")
        time.sleep(1.0)  # past the graph changes of start-up

        recording = os.path.join(work, f"capture-{period}.wav")
        before = session.log_size()
        capture = subprocess.run(
            ["jack_capture", "-dc", "-d", str(seconds), "-f", "wav", "-p", "pianola:out_1", "-p", "pianola:out_2",
             "-p", "fluidsynth:left", "-p", "fluidsynth:right", recording],
            env=dict(os.environ, JACK_DEFAULT_SERVER=name), capture_output=True, text=True,
            timeout=seconds + 30)
        during = session.server_log_text(before, session.log_size())
        if capture.returncode != 0 or not os.path.exists(recording):
            raise SystemExit(f"jack_capture failed ({capture.returncode}): {capture.stderr.strip()[-500:]}")
        captured_xruns = re.search(r"encountered (\d+) jack x-runs", capture.stdout + capture.stderr)
        for label, process in (("pianola", player), ("fluidsynth", fluidsynth)):
            if process.poll() is not None:
                raise SystemExit(f"{label} exited ({process.returncode}) during the capture")
    finally:
        session.close()
    with open(os.path.join(work, f"pianola-{period}.log"), errors="replace") as file:
        pianola_log = file.read()
    summary = re.findall(r"(\d+) events played, (\d+) late, (\d+) underruns", pianola_log)
    return {
        "audio": read_float_wav(recording),
        "jackd_xruns": xrun_lines(during),
        "capture_xruns": int(captured_xruns.group(1)) if captured_xruns else 0,  # said only when some
        "pianola_xruns": int(summary[-1][2]) if summary else None,
        "recording": recording,
    }


def ms(frames):
    return f"{frames / RATE * 1000:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=30, help="length of each capture")
    parser.add_argument("--periods", default="256,1024", help="JACK period sizes, comma-separated")
    parser.add_argument("--scratch-path", help="swift build's --scratch-path (default: SwiftPM's .build)")
    parser.add_argument("--no-build", action="store_true", help="use the pianola already built there")
    parser.add_argument("--font", default=os.path.join(ROOT, "SoundFonts", "PianolaGM.sf2"))
    args = parser.parse_args()

    build = ["swift", "build", "-c", "release", "--product", "pianola"]
    if args.scratch_path:
        build += ["--scratch-path", args.scratch_path]
    if not args.no_build:
        subprocess.run(build, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=3600)
    binaries = subprocess.run(build[:4] + build[6:] + ["--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True, timeout=600).stdout.strip()
    pianola = os.path.join(binaries, "pianola")
    with temporary_folder("jack-midi-timing") as work:
        periods = [int(value) for value in args.periods.split(",")]
        if any(period < 128 or period > 4096 for period in periods):
            raise SystemExit("periods must be 128...4096 frames (a shift is told from pianola's 64-frame spread)")
        # A SIGTERM ends the run like Ctrl-C: the clients and the server are stopped on the way out.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        notes_per_second = len(OFFSETS) * RATE / LOOP
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                                text=True, timeout=30).stdout.strip()

        print("$ python3 " + " ".join([os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
              + f"  (pianola {commit or '?'}, {os.path.relpath(pianola, ROOT)})")

        print(f"jackd -r -d dummy -r {RATE}; jack_midiseq: {len(OFFSETS)} notes per {LOOP}-frame loop at frames"
              f" {', '.join(map(str, OFFSETS))} ({notes_per_second:.1f} notes/s); {args.seconds} s captured per period;"
              f" font {os.path.relpath(args.font, ROOT)}, side stick (drum kit, key {KEY}), reverb and chorus off",
              flush=True)
        rows, checks = [], []
        for period in periods:
            result = run(pianola, args.font, period, args.seconds, work)
            audio = result["audio"]
            matched, detail, shift = {}, {}, None
            for label, channels in (("pianola", audio[:, 0:2]), ("fluidsynth", audio[:, 2:4])):
                starts, peak = onsets(channels)
                if len(starts) < 10:
                    raise SystemExit(f"period {period}: only {len(starts)} onsets from {label} (peak {peak:.2e});"
                                     f" see {result['recording']}")
                shift, matched[label], duplicates = match(starts, shift)
                detail[label] = {"stray": duplicates,
                                 "missed": len(expected_events(shift, len(audio), period) - set(matched[label]))}
            stretch, shifts = longest_stretch(matched["pianola"], matched["fluidsynth"], period)
            stats = {}
            for label in matched:
                kept = [matched[label][event] for event in stretch if event in matched[label]]
                onset = np.array([frame for frame, _ in kept])
                stats[label] = describe([error for _, error in kept])
                detail[label]["phases"] = len(set((onset % period).tolist()))  # onset frames, modulo the period
                detail[label]["blocks"] = len(set((onset % 64).tolist()))      # ... and modulo FluidSynth's block
            sent = {(frame - error) % period for frame, error in (matched["pianola"][e] for e in stretch
                                                                  if e in matched["pianola"])}
            later = [matched["pianola"][e][0] - matched["fluidsynth"][e][0] for e in stretch
                     if e in matched["pianola"] and e in matched["fluidsynth"]]
            cycles, late = result["jackd_xruns"]
            fs, pn = stats["fluidsynth"], stats["pianola"]
            rows.append(f"| {period} ({ms(period)} ms) | {fs['count']} / {pn['count']} |"
                        f" {fs['range']} ({ms(fs['range'])} ms) | {pn['range']} ({ms(pn['range'])} ms) |"
                        f" **{pn['range'] / fs['range']:.2f}×** |"
                        f" {fs['std']:.1f} ({ms(fs['std'])} ms) | {pn['std']:.1f} ({ms(pn['std'])} ms) |"
                        f" **{pn['std'] / fs['std']:.2f}×** |")
            checks.append(
                f"| {period} | {len(sent)} | {detail['fluidsynth']['phases']} / {detail['pianola']['phases']}"
                f" ({detail['pianola']['blocks']} modulo 64) |"
                f" {np.mean(later):.0f} ({min(later)} to {max(later)}) |"
                f" {detail['fluidsynth']['missed']} / {detail['pianola']['missed']} |"
                f" {detail['fluidsynth']['stray']} / {detail['pianola']['stray']} |"
                f" {shifts} ({len(stretch)} of {len(set(matched['pianola']) | set(matched['fluidsynth']))} notes kept) |"
                f" {cycles}" + (f" (late: {', '.join(f'{c} {n}' for c, n in sorted(late.items()))})" if late else "")
                + f" / {result['capture_xruns']} / {result['pianola_xruns']} |")
            if len(stretch) < 0.8 * len(set(matched["pianola"]) | set(matched["fluidsynth"])):
                print(f"warning: period {period}: {shifts} whole-period shifts, only {len(stretch)} notes counted;"
                      " the machine was too busy for this period (xruns)", file=sys.stderr)
            print(f"(period {period} done)", file=sys.stderr, flush=True)

        print(f"Timing error of each note against the sequencer's frame, up to the constant latency ({RATE} Hz;"
              " FluidSynth starts notes on its 64-frame block, so 63 frames of max-min, and 18.5 of std for notes"
              " spread evenly over the block, is the floor for both):")
        print()
        print("| period | notes (fluidsynth / pianola) | fluidsynth max-min | pianola max-min | pianola / fluidsynth |"
              " fluidsynth std | pianola std | pianola / fluidsynth |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            print(row)
        print()
        print("| period | frames of the period the notes were sent at | frames of the period the onsets fell on"
              " (fluidsynth / pianola) | pianola later than fluidsynth, frames | notes missed | stray onsets |"
              " whole-period shifts | xruns during the capture (jackd / jack_capture / pianola's session) |")
        print("|---|---:|---|---|---|---|---|---|")
        for row in checks:
            print(row)


if __name__ == "__main__":
    main()
