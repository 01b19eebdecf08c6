"""Checks of `pianola record` in the VM (Tests/Device/guest-record.sh), for device_tests.py.

- exact: a chirp plus noise played into snd-aloop and recorded from its other end equals the
  source sample for sample after alignment, at 44.1 and 48 kHz, 1 and 2 channels, s16/s24/f32
  files; the --json peaks match numpy's within 0.1 dB;
- overrun: the recorder stopped for 0.5 s counts the overrun, recovers, exits 0, and the file is
  valid;
- killed: SIGKILL after 4 s leaves a file libsndfile opens with all but at most the last second;
- full: a full tmpfs ends the recording with one clear line and a valid file;
- split: one-second parts join into the source; lost-input: the capture card unbound while
  recording ends with one line and a valid file;
- monitor: full duplex, the monitored output (and the recording) equal the input through the
  effect chain as `pianola process` computes it offline, at the latency reported;
- bad input: a playback-only device, 4 channels, 96 kHz: one line each, non-zero, no file.
"""

import ctypes
import ctypes.util
import json
import os
import re

import numpy as np

SOURCE_SECONDS = 1.5
EXACT = [(44100, 1, "s16"), (44100, 2, "f32"), (48000, 2, "s24"), (48000, 1, "f32")]


def source(rate, channels, seed=7, seconds=SOURCE_SECONDS):
    """A chirp (100 Hz rising 2 kHz a second) plus noise, each channel its own; every sample a
    multiple of 2^-15, exact in 16-bit, 24-bit and float files."""
    frames = int(rate * seconds)
    time = np.arange(frames) / rate
    generator = np.random.default_rng(seed)
    columns = []
    for channel in range(channels):
        chirp = 0.6 * np.sin(2 * np.pi * (100 + 2000 * time) * time + channel)
        noise = generator.uniform(-0.05, 0.05, frames)
        columns.append(np.round((chirp + noise) * 32768) / 32768)
    return np.stack(columns, axis=1).astype("<f4")


MONITOR_EFFECT = "eq:type=highShelf,freq=4000,gain=-6"


def write_sources(directory):
    # Half a second of silence after each: aplay's last, partial period does not always cross
    # snd-aloop before aplay closes it (the source, not the recorder, would be cut short).
    for rate, channels in {(rate, channels) for rate, channels, _ in EXACT} | {(48000, 2)}:
        padded = np.concatenate([source(rate, channels), np.zeros((rate // 2, channels), dtype="<f4")])
        padded.tofile(os.path.join(directory, f"src-{rate}-{channels}.raw"))
    np.concatenate([pause_source(), np.zeros((24000, 2), dtype="<f4")]).tofile(os.path.join(directory, "src-pause.raw"))


def pause_source():
    """Four seconds of stereo chirp and noise for the pause scenario (paused at about 1.2 s for a second)."""
    return source(48000, 2, seed=11, seconds=4)


def through_monitor_chain(pianola, directory):
    """The 48 kHz stereo source through the monitor's effect, by `pianola process` (offline)."""
    import subprocess
    import wave

    path = os.path.join(directory, "src-48000-2.wav")
    with wave.open(path, "wb") as file:  # every sample is a multiple of 2^-15: exact in 16 bits
        file.setnchannels(2)
        file.setsampwidth(2)
        file.setframerate(48000)
        file.writeframes(np.round(source(48000, 2) * 32768).astype("<i2").tobytes())
    processed = os.path.join(directory, "src-48000-2-fx.wav")
    subprocess.run([pianola, "process", path, "-o", processed, "--fx", MONITOR_EFFECT, "--format", "f32"],
                   check=True, capture_output=True)
    return read_audio(processed)[0]


class _Info(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


_sndfile = ctypes.CDLL(ctypes.util.find_library("sndfile"))
_sndfile.sf_open.restype = ctypes.c_void_p
_sndfile.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_Info)]
_sndfile.sf_readf_float.restype = ctypes.c_int64
_sndfile.sf_readf_float.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
_sndfile.sf_close.argtypes = [ctypes.c_void_p]


def read_audio(path):
    """(samples as (frames, channels) float32, rate) as libsndfile reads the file; None if it cannot."""
    info = _Info()
    handle = _sndfile.sf_open(path.encode(), 0x10, ctypes.byref(info)) if os.path.exists(path) else None
    if not handle:
        return None
    # Read to the end in blocks: a FLAC file cut short by a crash declares no length.
    blocks = []
    while True:
        block = np.zeros((65536, info.channels), dtype=np.float32)
        read = _sndfile.sf_readf_float(handle, block.ctypes.data, len(block))
        blocks.append(block[: max(read, 0)])
        if read < len(block):
            break
    _sndfile.sf_close(handle)
    return np.concatenate(blocks), info.samplerate


def _text(directory, name):
    path = os.path.join(directory, name)
    return open(path).read() if os.path.exists(path) else ""


def _summary(directory, name):
    try:
        return json.loads(_text(directory, f"{name}.json"))
    except ValueError:
        return None


def _status(directory, name):
    text = _text(directory, f"{name}.status").strip()
    return int(text) if text else None


def align(recorded, expected):
    """Where `expected` starts in `recorded` (its first 64 frames matching exactly), or None."""
    head = expected[:64]
    for start in np.flatnonzero(recorded[:, 0] == head[0, 0]):
        if start + len(head) <= len(recorded) and np.array_equal(recorded[start : start + len(head)], head):
            return int(start)
    return None


def check_record(directory, check, pianola):
    for rate, channels, encoding in EXACT:
        name = f"exact-{rate}-{channels}-{encoding}"
        expected = source(rate, channels)
        audio = read_audio(os.path.join(directory, f"{name}.wav"))
        summary = _summary(directory, name)
        if audio is None or summary is None:
            check(f"record {name}", False, f"status {_status(directory, name)}: {_text(directory, name + '.err')!r}")
            continue
        recorded, file_rate = audio
        start = align(recorded, expected)
        segment = recorded[start : start + len(expected)] if start is not None else recorded[:0]
        differing = int(np.count_nonzero(segment != expected[: len(segment)]))
        check(
            f"record {rate} Hz, {channels} ch, {encoding}: the recording equals the source",
            _status(directory, name) == 0 and file_rate == rate and recorded.shape[1] == channels
            and len(segment) == len(expected) and differing == 0 and summary["overruns"] == 0,
            f"source found at frame {start}; {len(segment)} of {len(expected)} frames compared, {differing} "
            f"samples differ; {summary['overruns']} overruns",
        )
        peaks = 20 * np.log10(np.abs(recorded).max(axis=0))
        error = float(np.abs(peaks - np.array(summary["peakDecibels"])).max())
        check(f"record {name}: meter peaks match numpy within 0.1 dB", error < 0.1, f"largest difference {error:.4f} dB")
        check_meter_log(directory, name, recorded, check)

    check_pause(directory, check)

    parts = [read_audio(os.path.join(directory, f"split-00{number}.wav")) for number in range(1, 5)]
    expected = source(48000, 2)
    joined = np.concatenate([part[0] for part in parts]) if all(parts) else np.zeros((0, 2), dtype=np.float32)
    start = align(joined, expected)
    segment = joined[start : start + len(expected)] if start is not None else joined[:0]
    check(
        "record --split: one-second parts that join into the source without a gap or an overlap",
        _status(directory, "split") == 0 and all(parts) and [len(part[0]) for part in parts] == [48000] * 4
        and len(segment) == len(expected) and np.array_equal(segment, expected),
        f"parts {[part and len(part[0]) for part in parts]} frames; source found at {start}",
    )

    summary = _summary(directory, "overrun")
    audio = read_audio(os.path.join(directory, "overrun.wav"))
    check(
        "record: an overrun (stopped 0.5 s) is counted, recovered, and the file stays valid",
        _status(directory, "overrun") == 0 and summary is not None and summary["overruns"] >= 1 and audio is not None
        and len(audio[0]) == 5 * 48000 and re.search(r"[1-9]\d* overruns?", _text(directory, "overrun.err")) is not None,
        f"status {_status(directory, 'overrun')}: {summary and summary['overruns']} overruns, "
        f"{audio and len(audio[0])} frames; {_text(directory, 'overrun.err').strip().splitlines()[-1:]}",
    )

    audio = read_audio(os.path.join(directory, "killed.wav"))
    times = [float(value) for value in _text(directory, "killed.times").split()]
    seconds = len(audio[0]) / 48000 if audio else 0
    recorded_for = times[1] - times[0] if len(times) == 2 else 0
    check(
        "record: after SIGKILL, libsndfile opens the file with all but at most the last second",
        audio is not None and seconds >= recorded_for - 1.0,
        f"{seconds:.2f} s in the file, killed {recorded_for:.2f} s after it started recording",
    )

    lines = [line for line in _text(directory, "full.err").splitlines() if line.startswith("pianola:")]
    audio = read_audio(os.path.join(directory, "full.wav"))
    check(
        "record: a full disk ends with one clear line and a valid file",
        _status(directory, "full") == 1 and len(lines) == 1 and "no space left on device" in lines[0]
        and audio is not None and len(audio[0]) > 10000,
        f"{lines}; {audio and len(audio[0])} frames saved",
    )

    lines = [line for line in _text(directory, "lost-input.err").splitlines() if line.startswith("pianola:")]
    audio = read_audio(os.path.join(directory, "lost-input.wav"))
    check(
        "record: the capture card going away ends with one clear line and a valid file",
        _status(directory, "lost-input") not in (None, 0) and len(lines) == 1 and "hw:Dummy,0,0" in lines[0]
        and "capture failed" in lines[0] and audio is not None and len(audio[0]) > 24000,
        f"status {_status(directory, 'lost-input')}: {lines}; {audio and len(audio[0])} frames saved",
    )

    check_monitor(directory, check, through_monitor_chain(pianola, directory))

    for name, words in (
        ("bad-playback-only", ["dmix:CARD=Loopback,DEV=0", "not a capture device"]),
        ("bad-channels", ["hw:Dummy,0,0", "4 channels are not supported"]),
        ("bad-rate", ["hw:Dummy,0,0", "96000 Hz is not supported"]),
    ):
        lines = _text(directory, f"{name}.err").strip().splitlines()
        check(
            f"record {name}: one clear line, non-zero exit, no file",
            _status(directory, name) not in (None, 0) and len(lines) == 1 and all(word in lines[0] for word in words)
            and not os.path.exists(os.path.join(directory, f"{name}.wav")),
            f"status {_status(directory, name)}: {lines}",
        )
    try:
        devices = json.loads(_text(directory, "record-devices.json"))
    except ValueError:
        devices = []
    check(
        "devices: capture devices listed",
        any(device["kind"] == "capture" and "Loopback" in device["name"] for device in devices),
        f"{sum(device['kind'] == 'capture' for device in devices)} capture devices",
    )


def check_monitor(directory, check, expected):
    audio = read_audio(os.path.join(directory, "monitor.wav"))
    raw = np.fromfile(os.path.join(directory, "monitor.raw"), dtype="<f4") if os.path.exists(
        os.path.join(directory, "monitor.raw")) else np.zeros(0, dtype="<f4")
    monitored = raw[: len(raw) // 2 * 2].reshape(-1, 2)
    start = align(monitored, expected)
    recorded_start = align(audio[0], expected) if audio else None
    segment = monitored[start : start + len(expected)] if start is not None else monitored[:0]
    differing = int(np.count_nonzero(segment != expected[: len(segment)]))
    summary = _summary(directory, "monitor") or {}
    reported, measured = summary.get("monitorLatencyMs"), summary.get("measuredMonitorLatencyMs")
    times = [float(value) for value in _text(directory, "monitor.times").split()]
    wall = None
    if start is not None and len(times) == 2:
        # Rough: the source left aplay at about source_begin and reached the monitor capture at
        # frame `start` after that capture began (process start-ups under emulation blur both).
        wall = (times[0] + start / 48000 - times[1]) * 1000
    check(
        "record --monitor: the monitored output is the input through the effect chain (full duplex)",
        _status(directory, "monitor") == 0 and len(segment) == len(expected) and differing == 0
        and recorded_start is not None,
        f"{len(segment)} of {len(expected)} frames compared with `pianola process --fx {MONITOR_EFFECT}`, "
        f"{differing} differ; the recording holds the same: {recorded_start is not None}",
    )
    # The latency the tool reports (input period + output buffer) is the most a frame waits: the
    # first frame of a capture period waits for the whole period, the last one only for the output
    # buffer. Measured by the devices' own accounts (when a frame entered the capture device, when
    # the output plays it), it must lie in between, give or take the loopback's timer: both ends
    # of the loopback (the capture account and the playback account) move on the kernel's 4 ms
    # tick, so each may be late by a tick and a little, 10 ms in all above the bound (with 5, the
    # check failed in about a third of the runs, builds from before the MIDI-out work as well:
    # measured 90-95 ms against 85.33); 5 below it, as before (never approached: 73-80 ms). The
    # recorder takes the earliest of its last 32 pairs of accounts (a stalled read makes one
    # late): from one pair it measured up to 98.75 ms; from the earliest, 87.63. Once, 31.83: after
    # a break, a pair mixing an account from before it with one from after (now left out).
    period = 1024 / 48
    check(
        "record --monitor: the measured latency is within the one reported",
        reported is not None and measured is not None and reported - period - 5 <= measured <= reported + 10,
        f"reported {reported and round(reported, 2)} ms, measured {measured and round(measured, 2)} ms by the devices'"
        f" accounts; source start to monitor by the wall clock (rough): {wall and round(wall, 1)} ms;"
        f" {summary.get('overruns')} overruns, {summary.get('underruns')} underruns",
    )


def decibels(levels):
    """dBFS as the meter shows it: 20 log10, with −160 for silence and below."""
    with np.errstate(divide="ignore"):
        return np.maximum(-160.0, 20 * np.log10(levels))


def check_meter_log(directory, name, recorded, check, window=1024):
    """Every window in --meter-log (the reading at its end frame, the RMS and the peak of the 1024
    frames before it) against numpy's RMS and peak of the same frames of the file, within 0.1 dB."""
    lines = _text(directory, f"{name}.meters.jsonl").splitlines()
    readings = [json.loads(line) for line in lines if line.strip()]
    compared, worst, where = 0, 0.0, None
    for reading in readings:
        end = int(reading["endFrame"])
        if end > len(recorded) or end < window:
            continue
        block = recorded[end - window : end].astype(np.float64)
        rms = decibels(np.sqrt((block**2).mean(axis=0)))
        peak = decibels(np.abs(block).max(axis=0))
        errors = np.concatenate([np.abs(rms - reading["rms"]), np.abs(peak - reading["peak"])])
        compared += 1
        if errors.max() > worst:
            worst, where = float(errors.max()), end
    check(
        f"record {name}: every meter window logged (RMS and peak) matches numpy within 0.1 dB",
        compared >= 40 and worst < 0.1,
        f"{compared} of {len(readings)} logged windows compared; largest difference {worst:.4f} dB (window ending at {where})",
    )


def check_pause(directory, check, period=1024):
    """The paused take holds the source up to the pause and from the resume on: two exact runs of
    it, nothing in between, the pause a whole number of periods long, about a second."""
    audio = read_audio(os.path.join(directory, "pause.wav"))
    expected = pause_source()
    recorded = audio[0] if audio else np.zeros((0, 2), dtype=np.float32)
    start = align(recorded, expected)
    first = resumed = None
    if start is not None:
        length = min(len(expected), len(recorded) - start)
        unequal = np.flatnonzero(np.any(recorded[start : start + length] != expected[:length], axis=1))
        first = int(unequal[0]) if len(unequal) else length
        # Where the frames after the first run come from in the source (past the first run).
        after = align(expected[first + 1 :], recorded[start + first :]) if first < len(expected) else None
        resumed = first + 1 + after if after is not None else None
    whole = False
    if resumed is not None:
        rest = expected[resumed:]
        segment = recorded[start + first : start + first + len(rest)]
        whole = len(segment) == len(rest) and np.array_equal(segment, rest)
    paused = (resumed - first) if resumed is not None else None
    check(
        "record --interactive: pause and resume leave exactly the un-paused parts, in whole periods",
        _status(directory, "pause") == 0 and start is not None and first is not None and 0 < first < len(expected)
        and whole and paused is not None and paused % period == 0 and (start + first) % period == 0
        and 0.5 * 48000 <= paused <= 1.6 * 48000,
        f"source found at frame {start}; the first run {first} frames, resumed at source frame {resumed} "
        f"(paused {paused} frames), the rest of the source follows exactly: {whole}; "
        f"status {_status(directory, 'pause')}: {_text(directory, 'pause.err').strip().splitlines()[-1:]}",
    )
