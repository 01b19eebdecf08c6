#!/usr/bin/env python3
"""Playback on a real, paced ALSA device: snd-aloop in a qemu VM (scripts/vm).

    device_tests.py PIANOLA SOUNDFONT [--keep DIR]

Generates a light test song (a piano C4 every half second), renders it offline on the host,
plays it inside the VM into the loopback card while capturing the loopback's other end
(Tests/Device/guest-tests.sh), and checks:

- stream: through the loopback at 1024 x 3 frames; the captured stream is the offline render
  sample for sample, the notes start every 22050 frames (± one 64-frame FluidSynth block), and
  playing took at least the song's duration (the device is paced, unlike ALSA's null and file
  plugins);
- quad: four channels through the loopback, the song routed to outputs 3-4 (--channel-map); the
  capture is `render --channel-map` of the same song, sample for sample, outputs 1-2 silent
- paced: into snd-dummy (paced by a high-resolution timer) at 256 x 2: real time, underruns
  reported as a figure (software emulation is several times slower than the host);
- xrun: the player is stopped for half a second mid-song; the underrun is counted and shown, the
  stream resumes where it stopped (the end of the capture equals the end of the render) and the
  player exits normally;
- busy: another program holds the device: one line naming the device and why, non-zero exit, no
  hang;
- rate: the device is fixed at 44.1 kHz by its other end and 48 kHz is asked for: one line naming
  the rate, non-zero exit;
- lost: the card is disconnected while playing (its driver unbound, as when a USB card is
  unplugged): the player stops with one line naming the device, non-zero exit.
- live input from test keyboards (autoconnect, --connect, the library example, latency), and
  subscriptions that fail: ALSASequencerInput reports them (an event and the source's failure),
  read through Tests/Device/SequencerProbe;
- audio in: `pianola record` through the loopback (Tests/Device/record_checks.py);
- MIDI out: `pianola play --midi-out` into sequencer destinations (Tests/Device/midi_out_checks.py):
  every event in order and on time through tempo changes (beside aplaymidi's timing), a seek's
  reset and chase, SIGTERM's reset, a destination that disappears, a route, an unknown name.

Prints one line per check and exits non-zero if any failed.
"""

import argparse
import contextlib
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

from midi_files import read_smf_messages, variable_length
from midi_out_checks import check_midi_out, write_midi_out_song
from record_checks import check_record, write_sources

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Python"))
from temporary_folder import temporary_folder  # noqa: E402

RATE = 44100
NOTE_INTERVAL = 0.5
NOTE_COUNT = 8
SONG_SECONDS = 4.5  # the last note ends at 4.3 s
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

failures = []


def check(name, condition, detail):
    print(f"{'PASS' if condition else 'FAIL'} {name}: {detail}")
    if not condition:
        failures.append(name)


def write_test_song(path):
    """Format 0, 480 ticks per quarter at 120 BPM: a piano C4 every half second."""
    events = [(0, bytes([0xFF, 0x51, 3, 0x07, 0xA1, 0x20])), (0, bytes([0xC0, 0]))]
    ticks_per_note = 480  # half a second at 120 BPM
    for index in range(NOTE_COUNT):
        start = ticks_per_note * (index + 1)
        key = 60  # the same note each time: the same attack, so onsets compare exactly
        events.append((start, bytes([0x90, key, 100])))
        events.append((start + 288, bytes([0x80, key, 0])))
    events.sort(key=lambda event: event[0])
    track = b""
    now = 0
    for tick, data in events:
        track += variable_length(tick - now) + data
        now = tick
    track += variable_length(480) + bytes([0xFF, 0x2F, 0])
    with open(path, "wb") as file:
        file.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480))
        file.write(b"MTrk" + struct.pack(">I", len(track)) + track)


def read_float_wav(path, channels=2):
    """Interleaved float32 samples of a WAV's data chunk, as an array of shape (frames, channels)."""
    data = open(path, "rb").read()
    offset = 12
    while offset + 8 <= len(data):
        chunk, size = data[offset : offset + 4], struct.unpack("<I", data[offset + 4 : offset + 8])[0]
        if chunk == b"data":
            return np.frombuffer(data[offset + 8 : offset + 8 + size], dtype="<f4").reshape(-1, channels)
        offset += 8 + size + (size & 1)
    raise ValueError(f"{path}: no data chunk")


def read_raw(path, channels=2):
    samples = np.fromfile(path, dtype="<f4")
    return samples[: len(samples) // channels * channels].reshape(-1, channels)


def sounding(audio, threshold=1e-6):
    return np.flatnonzero(np.abs(audio).max(axis=1) > threshold)


def onsets(audio, threshold=0.01):
    """Frames where the level first crosses the threshold after at least 0.2 s below a tenth of it."""
    level = np.abs(audio).max(axis=1)
    found, quiet_since = [], 0
    for frame in np.flatnonzero(level > threshold):
        if not found or frame - found[-1] > int(0.3 * RATE):
            if not found or level[max(quiet_since, frame - int(0.05 * RATE)) : frame].max() < threshold:
                found.append(frame)
        quiet_since = frame
    return found


def last_line(output):
    lines = output.strip().splitlines()
    return lines[-1] if lines else ""


def underruns(output):
    counts = [int(count) for count in re.findall(r"(\d+) underruns?", output)]
    return max(counts) if counts else None


def result(directory, name):
    def text(suffix):
        path = os.path.join(directory, f"{name}.{suffix}")
        return open(path).read() if os.path.exists(path) else ""

    status = text("status").strip()
    elapsed = text("elapsed").strip()
    # Progress and errors go to standard error, nothing to standard output.
    return (int(status) if status else None, text("out") + text("err"), float(elapsed) if elapsed else None)


LATENCY_NOTES = 200

# What the test keyboard plays (milliseconds, bytes): GM System On, controllers, a program change,
# pitch bend and channel pressure on channel 2; piano notes on channel 1; a master-volume SysEx.
KEYS = [
    (0, "f0 7e 7f 09 01 f7"), (20, "c1 30"), (40, "b1 07 64"), (60, "e1 00 50"), (80, "d1 40"),
    (100, "b1 0a 20"), (500, "90 3c 64"), (800, "80 3c 00"), (1000, "90 3c 64"), (1300, "80 3c 00"),
    (1500, "f0 7f 7f 04 01 00 7f f7"), (1700, "e1 00 40"), (2000, "90 3c 64"), (2300, "80 3c 00"),
]


def read_sent(path):
    """(before, after, bytes, queue_before, queue_after) per line of a test keyboard's log: the
    clock (ns) around each send, and the real time of pianola's arrival-clock queue around it."""
    sent = []
    for line in open(path):
        fields = line.split()
        sent.append((int(fields[0]), int(fields[1]), bytes(int(field, 16) for field in fields[4:]),
                     int(fields[2]), int(fields[3])))
    return sent


def span_errors(recorded_ms, spans):
    """How far each recorded time (ms) falls outside its send span (ns pairs), once the recording's
    time zero is put on the spans' clock by the median offset."""
    offset = float(np.median([r - (b + a) / 2e6 for r, (b, a) in zip(recorded_ms, spans)]))
    errors = []
    for r, (before, after) in zip(recorded_ms, spans):
        time = r - offset
        errors.append(time - before / 1e6 if time < before / 1e6 else max(0.0, time - after / 1e6))
    return errors


def check_live(directory):
    ticks_per_second = 3840.0  # 1920 per quarter note at 120 BPM
    for name, note_check in (("autoconnect", True), ("connect", False)):
        status, output, _ = result(directory, name)
        check(f"live {name}: exit", status == 0, f"status {status}: {last_line(output)}")
        keyboard_errors = open(os.path.join(directory, f"{name}.keyboard")).read().strip()
        connected = output.count("connected: ") - output.count("disconnected: ")
        check(
            f"live {name}: the keyboard is connected, and again after it came back",
            connected >= 2 and "disconnected: " in output and not keyboard_errors,
            f"{connected} connections, {output.count('disconnected: ')} disconnections {keyboard_errors}",
        )
        sent = []
        for part in ("sent1", "sent2"):
            path = os.path.join(directory, f"{name}.{part}")
            sent += read_sent(path) if os.path.exists(path) else []
        recorded_path = os.path.join(directory, f"{name}.mid")
        recorded = read_smf_messages(recorded_path) if os.path.exists(recorded_path) else []
        same = [entry[2] for entry in sent] == [message for _, message in recorded]
        check(
            f"live {name}: --record holds what was sent",
            same and len(sent) == 2 * len(KEYS),
            f"{len(sent)} messages sent, {len(recorded)} recorded, identical: {same}",
        )
        if same and sent:
            # Each message was sent between two readings of the sequencer's clock (the real time
            # of pianola's arrival-clock queue, which the kernel stamps events with); under
            # emulation a send can take milliseconds. The recorded time, put on that clock by the
            # median offset (the recording's time zero is pianola's start), must be within 1 ms
            # of that span. The same against CLOCK_MONOTONIC is shown too: under software
            # emulation the sequencer's timer callbacks run late, by milliseconds at times, and its
            # stamps lag the system clock by as much.
            recorded_ms = [tick / ticks_per_second * 1000 for tick, _ in recorded]
            queue_known = all(entry[3] >= 0 and entry[4] >= 0 for entry in sent)
            errors = span_errors(recorded_ms, [(entry[3], entry[4]) for entry in sent]) if queue_known else [99.0]
            system = span_errors(recorded_ms, [(entry[0], entry[1]) for entry in sent])
            spans = [(entry[1] - entry[0]) / 1e6 for entry in sent]
            check(
                f"live {name}: recorded times within 1 ms of the sending times",
                max(abs(error) for error in errors) <= 1.0,
                f"outside the send span on the sequencer's clock by {min(errors):+.3f} … {max(errors):+.3f} ms"
                f" over {len(errors)} messages (sends took up to {max(spans):.2f} ms); on CLOCK_MONOTONIC"
                f" {min(system):+.3f} … {max(system):+.3f} ms",
            )
        played = re.findall(r"(\d+) events? played, (\d+) late", output)
        check(
            f"live {name}: every message reached the sampler, none late",
            bool(played) and int(played[-1][0]) == len(sent) and int(played[-1][1]) == 0,
            f"{played[-1] if played else 'no summary'} for {len(sent)} sent",
        )
        if note_check:
            # Each note is placed a fixed delay after its arrival (the kernel's stamp, which the
            # recording holds): the intervals between onsets in the audio are the intervals between
            # arrivals, up to FluidSynth's 64-frame block and the recording's tick.
            captured = read_raw(os.path.join(directory, f"{name}.raw"))
            found = onsets(captured)
            note_times = [tick / ticks_per_second for tick, message in recorded if message[0] == 0x90]
            if len(found) == len(note_times):
                intervals = [note_times[i + 1] - note_times[i] for i in range(len(found) - 1)]
                deviations = [
                    ((found[i + 1] - found[i]) / RATE - intervals[i]) * 1000 for i in range(len(found) - 1)
                ]
                # The scheduler's map from arrival time to frames may rise by at most 200 ppm
                # (LiveMIDIScheduler.maximumDrift: a device clock drifting against the system's,
                # or a second of late wake-ups), so two notes 2.5 s apart may move by 0.5 ms.
                bounds = [(64 / RATE + 1 / ticks_per_second + 0.000_2 * interval) * 1000 for interval in intervals]
                check(
                    f"live {name}: notes sound at the intervals they arrived",
                    all(abs(d) <= bound for d, bound in zip(deviations, bounds)),
                    "interval errors " + ", ".join(f"{d:+.2f}" for d in deviations)
                    + " ms (FluidSynth starts notes on 64-frame blocks: up to 1.45 ms, plus the recording's"
                    + " tick and 200 ppm of the interval: up to " + ", ".join(f"{b:.2f}" for b in bounds) + " ms)",
                )
            else:
                check(f"live {name}: notes sound", False, f"{len(found)} onsets for {len(note_times)} notes")

    devices = json.load(open(os.path.join(directory, "devices.json")))
    sources = [device["description"] for device in devices if device["kind"] == "midi-source"]
    check(
        "devices: sequencer sources listed with the cards",
        "Named Keyboard: Keys" in sources and any(device["kind"] == "playback" for device in devices),
        f"MIDI sources {sources}",
    )

    status, output, _ = result(directory, "example")
    counts = re.findall(r"(\d+) events played, (\d+) recorded", output)
    recorded_path = os.path.join(directory, "live-keyboard.mid")
    recorded = read_smf_messages(recorded_path) if os.path.exists(recorded_path) else []
    check(
        "Examples/LiveKeyboard plays and records a keyboard",
        status == 0 and counts == [(str(len(KEYS)), str(len(KEYS)))] and len(recorded) == len(KEYS),
        f"status {status}: {last_line(output)}; {len(recorded)} messages in live-keyboard.mid",
    )

    # Latency by the output's own account (48 kHz, 256 x 2, snd-dummy, the default 1 ms delay).
    # Software emulation wakes threads late and its timers are coarse, so this checks the report
    # and sane bounds; the figures go to BENCHMARKS.md.
    status, output, _ = result(directory, "latency")
    path = os.path.join(directory, "latency.json")
    report = json.load(open(path)) if os.path.exists(path) else None
    if report:
        floor = report["bufferMs"]
        latency = report["latencyMs"]
        check(
            "live latency report (48 kHz, 256 x 2, snd-dummy)",
            status == 0 and report["notes"] == LATENCY_NOTES and latency["min"] >= floor - 0.5,
            f"{report['notes']} notes: latency p1 {latency['p1']:.2f}, p50 {latency['p50']:.2f}, p99 "
            f"{latency['p99']:.2f}, max {latency['max']:.2f} ms; jitter (p99 - p1) {report['jitterMs']:.2f} ms;"
            f" buffer {report['bufferMs']:.2f} ms + delay {report['delayMs']} ms; {last_line(output)}",
        )
    else:
        check("live latency report", False, f"status {status}: no report; {last_line(output)}")

    status, output, _ = result(directory, "unknown")
    lines = output.strip().splitlines()
    check(
        "live: an unknown source is one clear line, non-zero exit",
        status not in (None, 0) and len(lines) == 1 and "No Such Keyboard" in lines[0],
        f"status {status}: {output.strip()!r}",
    )

    # Subscriptions that fail, as the library reports them (events, Source.failure).
    status, output, _ = result(directory, "probe-start")
    refused = re.search(r"event: cannot connect: Locked Keyboard:Keys \((\d+:0)\): (.+)", output)
    check(
        "input: a source that refuses its subscription at start is reported (event, Source.failure)",
        status == 0 and bool(refused)
        and f"source: {refused.group(1)} connected=false failure={refused.group(2)}" in output,
        f"status {status}: {output.strip()!r}",
    )
    status, output, _ = result(directory, "probe-reconnect")
    events = [line[len("event: "):] for line in output.splitlines() if line.startswith("event: ")]
    kinds = [re.sub(r": Flaky Keyboard:Keys \(\d+:0\).*", "", event) for event in events]
    check(
        "input: a named source that comes back refusing its subscription is reported",
        status == 0 and kinds == ["connected", "disconnected", "cannot connect"]
        and re.search(r"source: \d+:0 connected=false failure=(?!none)", output) is not None,
        f"status {status}: {events}",
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pianola")
    parser.add_argument("soundfont")
    parser.add_argument("keyboard", help="the test keyboard (swift build --product test-keyboard)")
    parser.add_argument("example", help="Examples/LiveKeyboard (swift build --product live-keyboard)")
    parser.add_argument("probe", help="Tests/Device/SequencerProbe (swift build --product sequencer-probe)")
    parser.add_argument("monitor", help="Tests/Device/MIDIMonitor (swift build --product midi-monitor)")
    parser.add_argument("--keep", help="keep the VM's results in this directory")
    arguments = parser.parse_args()
    pianola = os.path.abspath(arguments.pianola)
    font = os.path.abspath(arguments.soundfont)
    keyboard = os.path.abspath(arguments.keyboard)
    example = os.path.abspath(arguments.example)
    probe = os.path.abspath(arguments.probe)
    monitor = os.path.abspath(arguments.monitor)

    keep = arguments.keep and os.path.abspath(arguments.keep)
    if keep:
        os.makedirs(keep, exist_ok=True)
    with contextlib.nullcontext(keep) if keep else temporary_folder("device") as directory:
        song = os.path.join(directory, "notes.mid")
        write_test_song(song)
        with open(os.path.join(directory, "keys.txt"), "w") as file:
            file.writelines(f"{time} {data}\n" for time, data in KEYS)
        with open(os.path.join(directory, "latency-keys.txt"), "w") as file:
            # 200 short notes at uneven intervals (10 to 29 ms), so arrivals fall everywhere in a period.
            time = 0
            for index in range(LATENCY_NOTES):
                key = 48 + index % 24
                file.write(f"{time} 90 {key:02x} 64\n{time + 5} 80 {key:02x} 00\n")
                time += 10 + index * 7 % 20
        write_sources(directory)
        midi_out_schedule = write_midi_out_song(os.path.join(directory, "midi-out.mid"))
        reference_path = os.path.join(directory, "notes.wav")
        subprocess.run(
            [pianola, "render", "-q", song, "-o", reference_path, "-s", font, "--format", "f32", "--rate", str(RATE)],
            check=True,
        )
        reference = read_float_wav(reference_path)
        quad_path = os.path.join(directory, "quad.wav")
        subprocess.run(
            [pianola, "render", "-q", song, "-o", quad_path, "-s", font, "--format", "f32", "--rate", str(RATE),
             "--channel-map", "1:3-4"],
            check=True,
        )
        quad_reference = read_float_wav(quad_path, channels=4)
        duration = len(reference) / RATE

        vm = subprocess.run(
            [os.path.join(ROOT, "scripts", "vm"), "--out", directory, "--",
             "sh", os.path.join(ROOT, "Tests", "Device", "guest-tests.sh"), directory, pianola, song, font,
             keyboard, example, probe, monitor],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        if vm.returncode != 0:
            print(vm.stdout)
            check("vm", False, f"scripts/vm exited with {vm.returncode}")
            return 1

        # What the player plays: the song up to its end (the render goes on into the release tail).
        compared = int(SONG_SECONDS * RATE)

        # 1. The stream through the loopback.
        status, output, elapsed = result(directory, "stream")
        check("stream: exit", status == 0, f"status {status}: {last_line(output)}")
        count = underruns(output)
        captured = read_raw(os.path.join(directory, "stream.raw"))
        reference_start = sounding(reference)[0]
        capture_sound = sounding(captured)
        if len(capture_sound) == 0:
            check("stream: sound", False, "the capture is silent")
        else:
            start = capture_sound[0] - reference_start
            segment = captured[start : start + compared] if start >= 0 else captured[:0]
            differing = int(np.count_nonzero(segment != reference[: len(segment)]))
            check(
                "stream: capture equals the offline render",
                len(segment) == compared and differing == 0 and count == 0,
                f"{len(segment)} of {compared} frames compared, {differing} samples differ, {count} underruns",
            )
            played = onsets(segment)
            steps = np.diff(played) if len(played) > 1 else np.array([])
            check(
                "stream: notes every 0.5 s, within one FluidSynth block",
                len(played) == NOTE_COUNT and np.abs(steps - NOTE_INTERVAL * RATE).max() <= 64,
                f"{len(played)} onsets, intervals {sorted(set(steps.tolist()))} frames (0.5 s = 22050;"
                " FluidSynth starts a note at its next 64-frame block)",
            )
        check(
            "stream: paced in real time",
            elapsed is not None and elapsed >= SONG_SECONDS,
            f"playing took {elapsed} s for a {SONG_SECONDS} s song",
        )

        # 1b. Four channels through the loopback (--channel-map 1:3-4).
        status, output, elapsed = result(directory, "quad")
        check("quad: exit", status == 0, f"status {status}: {last_line(output)}")
        count = underruns(output)
        captured = read_raw(os.path.join(directory, "quad.raw"), channels=4)
        capture_sound = sounding(captured)
        if len(capture_sound) == 0:
            check("quad: sound", False, "the four-channel capture is silent")
        else:
            start = capture_sound[0] - sounding(quad_reference)[0]
            segment = captured[start : start + compared] if start >= 0 else captured[:0]
            differing = int(np.count_nonzero(segment != quad_reference[: len(segment)]))
            silent = float(np.abs(segment[:, 0:2]).max()) if len(segment) else None
            # Outputs 1-2 carry the mix part, which plays no note: its synthesizer's reverb still adds
            # FluidSynth's anti-denormal offset (about -150 dBFS), so "silent" is below -120 dBFS.
            check(
                "quad: a four-channel stream captured equals render --channel-map, outputs 1-2 below -120 dBFS",
                len(segment) == compared and differing == 0 and silent is not None and silent < 1e-6 and count == 0,
                f"{len(segment)} of {compared} frames compared, {differing} samples differ, outputs 1-2 peak {silent},"
                f" {count} underruns",
            )

        # 2. Paced by a high-resolution timer at 256 x 2: the wall clock, and underruns as a figure.
        status, output, elapsed = result(directory, "paced")
        count = underruns(output)
        check(
            "paced 256 x 2: plays in real time",
            status == 0 and elapsed is not None and elapsed >= SONG_SECONDS,
            f"status {status}, {elapsed} s for a {SONG_SECONDS} s song, {count} underruns (software emulation)",
        )

        # 3. An underrun, recovered.
        status, output, elapsed = result(directory, "xrun")
        count = underruns(output)
        check("xrun: exit", status == 0, f"status {status}: {last_line(output)}")
        check("xrun: underrun counted and shown", count is not None and count >= 1, f"{count} underruns reported")
        captured = read_raw(os.path.join(directory, "xrun.raw"))
        played, expected = onsets(captured), onsets(reference)
        # A note cut by the pause shows as one more onset when the sound resumes.
        if len(played) >= NOTE_COUNT and len(expected) == NOTE_COUNT:
            # The last note, after the pause, must be the render's last note, sample for sample.
            length = int(0.3 * RATE)
            same = np.array_equal(
                captured[played[-1] : played[-1] + length], reference[expected[-1] : expected[-1] + length]
            )
            pause = (played[-1] - played[0]) - (expected[-1] - expected[0])
            check(
                "xrun: the stream resumes where it stopped",
                same and pause > 0,
                f"last note identical to the render: {same}; the notes span {pause / RATE:.3f} s more (the pause)",
            )
        else:
            check("xrun: every note played", False, f"{len(played)} onsets in the capture, {len(expected)} rendered")

        # Errors: one line, non-zero, promptly.
        for name, words in (
            ("busy", ["hw:Loopback,0,0", "busy"]), ("rate", ["48000"]), ("lost", ["hw:Dummy,0,0", "disconnected"])
        ):
            status, output, elapsed = result(directory, name)
            # Progress lines come before the error when the device is lost while playing.
            lines = [line for line in output.strip().splitlines() if line.startswith("pianola:")]
            check(
                f"{name}: one clear line, non-zero exit",
                status not in (None, 0, 124) and len(lines) == 1 and all(word in lines[0] for word in words),
                f"status {status} after {elapsed} s: {output.strip()!r}",
            )

        check_live(directory)
        check_record(directory, check, pianola)
        check_midi_out(directory, check, midi_out_schedule)

        if failures:
            print(f"device tests: FAILED: {', '.join(failures)}"
                  + (f" (results in {keep})" if keep else " (--keep DIR keeps the results)"))
            return 1
        print("device tests: all passed" + (f" (results in {keep})" if keep else ""))
        return 0


if __name__ == "__main__":
    sys.exit(main())
