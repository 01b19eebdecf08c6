#!/usr/bin/env python3
"""Render a MIDI corpus on a Ray cluster with `pianola render --manifest`.

    python3 Examples/RayCorpus/ray_render.py corpus.jsonl [--address auto] [--shards N]
        [--pianola PATH] [--work DIR] [-- PIANOLA-RENDER-OPTIONS...]

The manifest is pianola's (one JSON object per line: "input", "output", and optionally
"soundfont", "rate", "format", "gain", "tail", "loudness", "truePeak"; relative paths are relative
to the manifest). The driver splits it into shards (absolute paths, written to --work, by default
beside the manifest): by the songs' lengths (`pianola info`), longest first, in shards of
decreasing size that Ray hands out as CPUs come free, so that all CPUs finish together. It runs one
Ray task per shard, and each task runs

    pianola render --manifest SHARD --ledger LEDGER --failures SHARD.failures.jsonl --jobs 1 ...

on whatever node Ray gives it. All tasks share one ledger (NAME.done.jsonl beside NAME.jsonl, appended a line at a
time), so the run is resumable exactly as a local `pianola render --manifest` is: a finished output
is never rendered again, by this run or the next. A task whose worker dies (a node lost, a process
killed) is retried by Ray; its pianola dies with it (parent-death signal), so no orphan renders a
shard twice, and the retry skips what the ledger already holds. The failures of every shard are
gathered into NAME.failures.jsonl.

On a real cluster: every node needs pianola (the same build), the SoundFonts and the corpus at
the same paths (a shared file system such as NFS, or identical copies), and the output folders
and the ledger on storage all nodes write to. Start Ray on the nodes (`ray start --head` on one,
`ray start --address HEAD:6379` on the others; prefix both with `RAY_worker_niceness=0` on nodes
that do nothing else, or the renders run at niceness 15, Ray's default for workers) and run the
driver with `--address auto` on the head. Without --address, the driver starts a local Ray with
this machine's CPUs (workers at niceness 0).

Exit status: 0 when every job rendered (now or before), 1 when some failed, 2 on a usage error.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import ray


def read_manifest(path):
    base = os.path.dirname(os.path.abspath(path))
    jobs = []
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                job = json.loads(text)
            except json.JSONDecodeError:
                job = {"input": "", "output": "", "_bad": text}
            if isinstance(job, dict):
                for key in ("input", "output", "soundfont"):
                    if isinstance(job.get(key), str) and job[key] and not os.path.isabs(job[key]):
                        job[key] = os.path.join(base, job[key])
            jobs.append((number, job))
    return jobs


def estimate_costs(pianola, jobs):
    """Each job's expected render time, in seconds of audio: the song's length by `pianola info`
    (or, where pianola cannot run on this node, the file's size in kB); 0 for an unreadable input."""
    inputs = [job.get("input") if isinstance(job.get("input"), str) else "" for job in jobs]
    lengths = {}
    readable = [path for path in dict.fromkeys(inputs) if path and os.path.isfile(path)]
    try:
        for start in range(0, len(readable), 256):
            result = subprocess.run([pianola, "info", "--json"] + readable[start:start + 256],
                                    capture_output=True, text=True)
            for entry in json.loads(result.stdout or "[]"):
                if entry.get("durationSeconds") is not None:
                    lengths[entry["path"]] = float(entry["durationSeconds"])
    except (OSError, ValueError):
        lengths = {path: os.path.getsize(path) / 1000 for path in readable}
    return [lengths.get(path, 0.0) for path in inputs]


@ray.remote(num_cpus=1, max_retries=5)
def render_shard(pianola, shard, ledger, failures, extra):
    """Runs pianola on one shard; returns (exit status, the end of its messages)."""
    import ctypes
    import signal

    def die_with_parent():
        # PR_SET_PDEATHSIG: if this Ray worker dies, pianola is killed with it.
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)

    result = subprocess.run(
        [pianola, "render", "--manifest", shard, "--ledger", ledger, "--failures", failures, "--jobs", "1", "-q"]
        + extra, capture_output=True, text=True, preexec_fn=die_with_parent)
    return result.returncode, result.stderr[-2000:]


def main():
    arguments = sys.argv[1:]
    extra = []
    if "--" in arguments:
        extra = arguments[arguments.index("--") + 1:]
        arguments = arguments[:arguments.index("--")]
    parser = argparse.ArgumentParser(description="Render a MIDI corpus on a Ray cluster with pianola.")
    parser.add_argument("manifest")
    parser.add_argument("--address", help="Ray cluster address (auto: the running cluster); default: a local Ray")
    parser.add_argument("--cpus", type=int, help="CPUs for a local Ray (default: all)")
    parser.add_argument("--shards", type=int,
                        help="split the corpus into N balanced tasks (default: shards of decreasing size, "
                        "longest songs first, handed out as CPUs come free)")
    parser.add_argument("--pianola", default="pianola", help="the pianola binary on the nodes")
    parser.add_argument("--work", help="folder for the shard manifests (default: beside the manifest)")
    args = parser.parse_args(arguments)

    manifest = os.path.abspath(args.manifest)
    jobs = read_manifest(manifest)
    ledger = os.path.splitext(manifest)[0] + ".done.jsonl"  # as `pianola render --manifest` names it
    failures_path = os.path.splitext(manifest)[0] + ".failures.jsonl"
    work = os.path.abspath(args.work or os.path.splitext(manifest)[0] + ".shards")
    os.makedirs(work, exist_ok=True)
    pianola = args.pianola if os.sep not in args.pianola else os.path.abspath(args.pianola)

    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        # Ray runs its workers at niceness 15 by default; rendering is this cluster's whole job,
        # and at 15 every other process on the machine comes first (about 4 % slower here).
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(num_cpus=args.cpus, log_to_driver=False, include_dashboard=False)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    costs = estimate_costs(pianola, [job for _, job in jobs])
    order = sorted(range(len(jobs)), key=lambda index: costs[index], reverse=True)
    if args.shards:
        # A fixed number of shards, balanced: longest job first, each to the lightest shard.
        members = [[] for _ in range(max(1, min(len(jobs), args.shards)))]
        loads = [0.0] * len(members)
        for index in order:
            lightest = loads.index(min(loads))
            members[lightest].append(jobs[index])
            loads[lightest] += costs[index] + 1e-9
    else:
        # Guided self-scheduling: shards of decreasing size, longest songs first, handed out in
        # that order as CPUs come free. The first shards are a quarter of the remaining work per
        # CPU; the last ones are small (1/16 of a CPU's share), so the CPUs finish together however
        # wrong the estimates were, and each shard still renders long enough to pay for its
        # SoundFont load.
        total = sum(costs) or 1.0
        floor = total / (16 * cpus)
        members, remaining, position = [], total, 0
        while position < len(order):
            target = max(remaining / (2 * cpus), floor)
            shard, load = [], 0.0
            while position < len(order) and (not shard or load + costs[order[position]] <= target):
                shard.append(jobs[order[position]])
                load += costs[order[position]]
                position += 1
            members.append(shard)
            remaining -= load
    shards = []
    for index in range(len(members)):
        path = os.path.join(work, f"shard-{index:04d}.jsonl")
        with open(path, "w") as handle:
            for number, job in members[index]:
                if "_bad" in job:
                    handle.write(job["_bad"] + "\n")
                else:
                    handle.write(json.dumps(job) + "\n")
        shards.append(path)

    started = time.monotonic()
    pending = {
        render_shard.remote(pianola, path, ledger, path + ".failures.jsonl", extra): path for path in shards
    }
    worst = 0
    done = 0
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        path = pending.pop(ready[0])
        done += 1
        try:
            status, messages = ray.get(ready[0])
        except Exception as error:  # the task failed for good (Ray's retries used up)
            status, messages = 3, str(error)
        if status not in (0, 1):
            print(f"{os.path.basename(path)}: pianola exited {status}: {messages.strip()[-300:]}", file=sys.stderr)
        worst = max(worst, status)
        print(f"\r[{done}/{len(shards)} shards] {time.monotonic() - started:.1f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    # Gather the failures (this run's; a failed job is retried by the next run).
    with open(failures_path, "w") as out:
        for path in shards:
            try:
                with open(path + ".failures.jsonl") as handle:
                    out.write(handle.read())
            except FileNotFoundError:
                pass
    failed = sum(1 for _ in open(failures_path))
    recorded = set()
    if os.path.exists(ledger):
        for line in open(ledger):
            try:
                recorded.add(json.loads(line)["output"])
            except (ValueError, KeyError):
                pass
    print(f"{len(jobs)} jobs: {len(recorded)} outputs recorded in {ledger}, {failed} failed"
          + (f" (see {failures_path})" if failed else "") + f"; {time.monotonic() - started:.1f} s", file=sys.stderr)
    ray.shutdown()
    sys.exit(0 if worst == 0 and failed == 0 else 1)


if __name__ == "__main__":
    main()
