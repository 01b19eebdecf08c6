#!/usr/bin/env python3
"""The Ray corpus driver (Examples/RayCorpus/ray_render.py) on a local Ray cluster with 2 CPUs.

    ray_corpus_test.py PIANOLA SOUNDFONT

A corpus of 30 songs and one broken file. Run 1: a Ray worker is killed (SIGKILL) in the middle
of a shard; Ray retries the shard. Checks: every output is byte for byte a clean render, the ledger
holds each output exactly once (nothing rendered twice), the broken file (and only it) is in
failures.jsonl, the killed worker's pianola died with it, no temporary file is left. Run 2 (the
same command again): nothing is rendered, nothing changes. Exits non-zero if a check fails.
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "Tests", "Python"))
from temporary_folder import temporary_folder  # noqa: E402

DRIVER = os.path.join(ROOT, "Examples", "RayCorpus", "ray_render.py")
SONGS = 30

failures = 0


def check(ok, message):
    global failures
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {message}", flush=True)


def ledger_outputs(path):
    outputs = []
    if os.path.exists(path):
        for line in open(path):
            try:
                outputs.append(json.loads(line)["output"])
            except (ValueError, KeyError):
                pass
    return outputs


def shard_renders():
    """(pid, parent pid) of the pianola processes rendering a shard."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            status = open(f"/proc/{entry}/status").read()
        except OSError:
            continue
        if len(command) > 3 and command[1] == b"render" and b"shard-" in command[3]:
            parent = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
            found.append((int(entry), parent))
    return found


def main():
    pianola, font = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with temporary_folder("ray") as work:
        song = open(os.path.join(ROOT, "Examples", "demo-song.mid"), "rb").read()
        os.makedirs(os.path.join(work, "in"))
        with open(os.path.join(work, "corpus.jsonl"), "w") as manifest:
            for index in range(SONGS):
                open(os.path.join(work, "in", f"song{index}.mid"), "wb").write(song)
                manifest.write(json.dumps({"input": f"in/song{index}.mid", "output": f"out/song{index}.wav", "tail": 1}) + "\n")
            open(os.path.join(work, "in", "broken.mid"), "wb").write(b"not MIDI at all")
            manifest.write(json.dumps({"input": "in/broken.mid", "output": "out/broken.wav"}) + "\n")
        reference = os.path.join(work, "reference.wav")
        subprocess.run([pianola, "render", "-q", os.path.join(ROOT, "Examples", "demo-song.mid"), "-o", reference,
                        "-s", font, "--tail", "1"], check=True)
        expected = open(reference, "rb").read()
        ledger = os.path.join(work, "corpus.done.jsonl")
        command = [sys.executable, DRIVER, os.path.join(work, "corpus.jsonl"), "--cpus", "2", "--pianola", pianola,
                   "--", "-s", font]

        # Run 1, with a worker killed mid-shard.
        driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = None
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and driver.poll() is None and killed is None:
            if len(ledger_outputs(ledger)) >= 3:
                for pid, parent in shard_renders():
                    os.kill(parent, signal.SIGKILL)  # the Ray worker running this shard
                    killed = (pid, parent, len(ledger_outputs(ledger)))
                    break
            time.sleep(0.02)
        stdout, stderr = driver.communicate(timeout=600)
        check(killed is not None, f"a Ray worker was killed in the middle of a shard "
              f"({killed[2] if killed else '?'} of {SONGS} outputs recorded then)")
        if killed:
            time.sleep(0.5)
            check(not os.path.exists(f"/proc/{killed[0]}"), "its pianola died with it (no orphan rendering on)")
        check(driver.returncode == 1, f"the driver exits 1 (one bad file): {driver.returncode}")
        outputs = ledger_outputs(ledger)
        check(len(outputs) == SONGS and len(set(outputs)) == SONGS,
              f"the ledger holds each output once: {len(outputs)} records, {len(set(outputs))} outputs")
        same = sum(open(os.path.join(work, "out", f"song{index}.wav"), "rb").read() == expected
                   for index in range(SONGS) if os.path.exists(os.path.join(work, "out", f"song{index}.wav")))
        check(same == SONGS, f"every output is byte for byte a clean render: {same} of {SONGS}")
        failed = [json.loads(line) for line in open(os.path.join(work, "corpus.failures.jsonl"))]
        check(len(failed) == 1 and failed[0]["input"].endswith("broken.mid") and "not a MIDI file" in failed[0]["error"],
              f"failures.jsonl names the broken file and why: {failed}")
        leftovers = [name for name in os.listdir(os.path.join(work, "out")) if ".partial-" in name]
        check(not leftovers, f"no temporary file left: {leftovers}")

        # Run 2: everything is done.
        times = {name: os.path.getmtime(os.path.join(work, "out", name)) for name in os.listdir(os.path.join(work, "out"))}
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=600)
        check(len(ledger_outputs(ledger)) == SONGS, "a rerun renders nothing: the ledger is unchanged")
        check(times == {name: os.path.getmtime(os.path.join(work, "out", name)) for name in os.listdir(os.path.join(work, "out"))},
              "a rerun leaves every output as it was")
        check(rerun.returncode == 1, f"the rerun still reports the broken file: {rerun.returncode}")
        print("cluster tests: " + ("all passed" if failures == 0 else f"{failures} failed"))
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
