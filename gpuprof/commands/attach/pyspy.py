"""The Python stacks of a running job, read from outside by py-spy (an optional dependency: the
extra `gpuprof-advisor[attach]`). py-spy reads the processes' memory without stopping them
(--nonblocking), follows their child processes (DataLoader workers, a launcher's ranks), and keeps
idle threads (a training thread blocked on the DataLoader's queue is the answer we need).

Its trace (each thread's frames opened and closed as its stack changed between samples, with
times; the process and the thread are its outermost frames) is turned into the stacks file's
shape here: each stack with the microseconds it stood for. Nothing else reads py-spy's format."""

import os
import re
import shutil
import sys

from gpuprof.errors import UsageProblem

MISSING = ("gpuprof attach needs py-spy to read a running job's Python stacks: "
           "pip install py-spy")
MAX_STACKS = 4000          # distinct stacks kept per thread; the rest are summed as one "other" stack

_PROCESS_FRAME = re.compile(r'^process (\d+):"(.*)"$', re.DOTALL)
_THREAD_FRAME = re.compile(r"^thread \((0x[0-9a-fA-F]+|\d+)\)(?:: (.*))?$", re.DOTALL)


def find_pyspy() -> str:
    """py-spy next to this Python (its own environment) or on PATH; UsageProblem when neither."""
    beside = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("py-spy")
    if found:
        return found
    raise UsageProblem(MISSING)


def record_command(pyspy: str, pid: int, duration_s: float, rate_hz: int, output: str) -> list:
    return [pyspy, "record", "--pid", str(pid), "--duration", str(max(int(duration_s + 0.999), 1)),
            "--rate", str(rate_hz), "--format", "chrometrace", "--output", output, "--threads", "--idle",
            "--nonblocking", "--subprocesses", "--full-filenames"]


def parse_trace(events: list) -> list:
    """The processes of py-spy's trace: [{"pid", "parents", "command", "threads": [{"tid", "name",
    "seconds", "stacks": [{"frames": outermost first, "n": microseconds}]}]}].

    py-spy writes, per thread, the frames that closed and opened since that thread's previous
    sample, with the sample's time; the process and the thread are the outermost frames. It keys
    a thread by its pthread id, which a forked DataLoader worker shares with the thread that forked
    it, so one stream of events can alternate between two processes: each stream is replayed on
    its own, and what each sample shows is credited to the process and thread its frames name.

    A stack stands for the time until that thread's next sample that changed it: when py-spy waits
    for a core (a machine the job keeps busy), the time it lost goes to the stack it saw last, not
    to the one it sees when a core frees, which is most often a thread that has just blocked."""
    streams = {}          # pthread id -> {"stack": [...], "ts": time of the sample being replayed}
    seen = {}             # (pid, tid) -> [(time, frames or None when the thread was gone)]
    ends = {}             # pthread id -> the stream's last time
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict) or event.get("ph") not in ("B", "E"):
            continue
        ts = event.get("ts")
        if not isinstance(ts, (int, float)):
            continue
        stream = streams.setdefault(event.get("tid"), {"stack": [], "ts": None, "key": None})
        if stream["ts"] is not None and ts != stream["ts"]:
            _sampled(stream, seen)
        stream["ts"] = ts
        ends[event.get("tid")] = ts
        args = event.get("args") or {}
        name = str(event.get("name") or "?")
        if event["ph"] == "B":
            stream["stack"].append(f"{name} ({args.get('filename')}:{args.get('line')})" if args.get("filename")
                                   else name)
        elif stream["stack"]:
            stream["stack"].pop()
    for stream in streams.values():
        if stream["ts"] is not None:
            _sampled(stream, seen)
    processes = {}
    for key, samples in seen.items():
        samples.sort(key=lambda item: item[0])
        for (ts, frames), (next_ts, _) in zip(samples, samples[1:]):
            if frames is not None and next_ts > ts:
                _add(processes, frames, int(next_ts - ts))
    return _finish(processes)


def _sampled(stream: dict, seen: dict) -> None:
    """Note what a replayed sample showed: a thread's stack from then on, or its end."""
    frames = tuple(stream["stack"])
    key = _identity(frames)
    if key is None:
        if stream["key"] is not None:
            seen[stream["key"]].append((stream["ts"], None))
        stream["key"] = None
        return
    # Where the stream passes to the other process sharing its pthread id, the one it leaves keeps
    # its stack until its own next sample.
    stream["key"] = key
    seen.setdefault(key, []).append((stream["ts"], frames))


def _identity(frames: tuple):
    """(pid, thread id) named by a stack's outermost frames, or None."""
    pid = thread = None
    for frame in frames:
        match = _PROCESS_FRAME.match(frame)
        if match:
            pid = int(match.group(1))
            continue
        match = _THREAD_FRAME.match(frame)
        if match and pid is not None:
            thread = _tid(match.group(1))
        break
    return (pid, thread) if pid is not None and thread is not None else None


def _add(processes: dict, frames: tuple, micros: int) -> None:
    chain = []
    position = 0
    while position < len(frames):
        match = _PROCESS_FRAME.match(frames[position])
        if not match:
            break
        chain.append((int(match.group(1)), match.group(2)))
        position += 1
    thread = _THREAD_FRAME.match(frames[position]) if position < len(frames) else None
    if not chain or not thread:
        return
    pid, command = chain[-1]
    process = processes.setdefault(pid, {"pid": pid, "parents": [p for p, _ in chain[:-1]], "command": command,
                                         "threads": {}})
    tid = _tid(thread.group(1))
    entry = process["threads"].setdefault(tid, {"tid": tid, "name": thread.group(2) or "", "seconds": 0.0,
                                                "stacks": {}})
    entry["seconds"] += micros / 1e6
    key = tuple(frames[position + 1:])
    if key not in entry["stacks"] and len(entry["stacks"]) >= MAX_STACKS:
        key = ("(other stacks)",)
    entry["stacks"][key] = entry["stacks"].get(key, 0) + micros


def _finish(processes: dict) -> list:
    out = []
    for process in processes.values():
        threads = []
        for entry in process["threads"].values():
            stacks = [{"frames": list(frames), "n": n} for frames, n in
                      sorted(entry["stacks"].items(), key=lambda item: -item[1])]
            threads.append(dict(entry, seconds=round(entry["seconds"], 4), stacks=stacks))
        out.append(dict(process, threads=sorted(threads, key=lambda t: -t["seconds"])))
    return sorted(out, key=lambda p: (len(p["parents"]), p["pid"]))


def _tid(text: str) -> int:
    return int(text, 16) if text.startswith("0x") else int(text)


def first_error(stderr: str) -> str:
    """py-spy's own reason, one line, from its stderr (which ends in a Rust backtrace)."""
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith("Error:"):
            return line[len("Error:"):].strip()
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("py-spy>")]
    return lines[0] if lines else "py-spy ended without a reason"
