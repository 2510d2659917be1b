"""A job gpuprof attached to, from the stacks sampled from outside (`gpuprof attach`): who is the
training thread, how its time splits (waiting on the DataLoader, making batches itself, forward,
backward, optimizer, evaluation, other), what each DataLoader worker does (reading, computing,
idle) and at which lines; then the `steps` and `dataloaders` sections the rules read, in the same
terms as a run's probes give them.

Pure: built from the saved stacks (gpuprof.record.stacks) and the system sampler's per-process
figures, so a saved attach gives the same report every time. What sampling cannot know (batch
sizes, dtypes, copies, step counts) stays None."""

import functools
import re

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.sections.host_time import analyse_samples, use_sampled_batching
from gpuprof.record.frames import LIBRARY_PATH, TORCH_MARKERS

TRAINING_KINDS = ("backward", "optimizer", "forward", "dataloader")
WORKER_LOOP = ("torch/utils/data/_utils/worker.py", "_worker_loop")
PIN_LOOP = ("torch/utils/data/_utils/pin_memory.py", "_pin_memory_loop")
FETCH = "torch/utils/data/_utils/fetch.py"
INLINE_ITERATOR = "_SingleProcessDataLoaderIter"
#: Libraries whose frames in a worker mean it is reading data rather than computing on it.
READERS = re.compile(r"/h5py/|/numpy/lib/(_?npyio|format|_npyio_impl)|/numpy/(core|_core)/memmap|/zipfile|/tarfile|"
                     r"/torch/serialization\.py|/pyarrow/|/pandas/io/|/lmdb|/PIL/Image\.py|/gzip\.py|/shutil\.py|"
                     r"/urllib/|/http/|/requests/|/fsspec/|/s3fs/|/boto")
READING_FUNCTION = re.compile(r"(^|_)(read|load|open|fetch|get_file|download)", re.IGNORECASE)
EVALUATION = re.compile(r"(^|_)(eval|evaluate|evaluation|validate|validation|valid|val|test)($|_)", re.IGNORECASE)
LIBRARY = re.compile(LIBRARY_PATH + "|^<")
FRAME = re.compile(r"^(?P<name>.*) \((?P<path>.*):(?P<line>\d+)\)$")
MIN_TRAINING_S = 0.5          # a training thread seen for less than this is not judged
HOT = 5                       # hottest places kept per thread or worker
FRAME_CACHE = 65536           # parsed frames kept: a saved attach repeats the same frames across its stacks
WORKER_STACKS = 50            # a process's first stacks per thread read to tell a DataLoader worker
#: The workers' CPU over their busy wall is held to at most this many cores: the busy share is
#: estimated from the stacks, and a worker's own threads may add a few cores to its main one.
WORKER_CORES_MAX = 4
SPLIT = ("waiting_on_dataloader", "making_batches", "forward", "backward", "optimizer", "collective", "evaluation",
         "other")


@functools.lru_cache(maxsize=FRAME_CACHE)
def parse_frame(text: str) -> tuple:
    """('function', 'path', line) of a sampled frame 'function (path:line)'; line 0 when absent."""
    match = FRAME.match(text)
    if not match:
        return text, "", 0
    return match["name"], match["path"].replace("\\", "/"), int(match["line"])


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _is_user(path: str) -> bool:
    return bool(path) and not LIBRARY.search(path)


def _has(frames, place) -> bool:
    fragment, function = place
    return any(fragment in path and _short(name) == function for name, path, _ in frames)


def _marker(name: str, path: str):
    for kind, fragment, functions in TORCH_MARKERS:
        if fragment in path and (functions is None or _short(name) in functions):
            return kind
    return None


def _place(frame, relative_to=None) -> str:
    name, path, line = frame
    return f"{name} ({display_path(path, relative_to)}:{line})"


_LIBRARY_ROOT = re.compile(r"^.*/(?:site|dist)-packages/|^.*/lib/python\d+(?:\.\d+)?/")


def display_path(path: str, cwd=None) -> str:
    """A path as the user would type it: relative to the job's folder when inside it, a library's
    from its package (torch/utils/data/...), anything else in full."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return _LIBRARY_ROOT.sub("", path)


class TrainingSample:
    """One stack of a training thread, classified: its kind (a SPLIT key, or 'host'), the user
    frames innermost first, and the line of the user's code that drove the DataLoader."""

    __slots__ = ("kind", "users", "loop_line")

    def __init__(self, frames: list, cwd=None):
        inner_first = list(reversed(frames))
        self.users = [f for f in inner_first if _is_user(f[1])]
        self.loop_line = None
        kind = None
        for name, path, _ in inner_first:
            kind = _marker(name, path)
            if kind is not None:
                break
        if kind == "dataloader":
            self.loop_line = _loop_line(inner_first, cwd)
            kind = "making_batches" if any(INLINE_ITERATOR in n for n, _, _ in inner_first) else "waiting_on_dataloader"
        if any(EVALUATION.search(_short(n)) for n, p, _ in self.users):
            kind = "evaluation"
        self.kind = kind or "host"


def _loop_line(inner_first: list, cwd=None):
    """The user's line just outside the DataLoader's frames: where its iterator is advanced."""
    inside = False
    for name, path, line in inner_first:
        if "torch/utils/data/" in path:
            inside = True
        elif inside and _is_user(path):
            return f"{display_path(path, cwd)}:{line}"
    return None


def classify_training(thread: dict, cwd=None) -> dict:
    """The training thread's time split (shares of the time its stacks stood for, in the stacks'
    weights: microseconds), the hottest places of host code,
    the DataLoader loop lines by share, and the in-process sampler's counts (for host_time)."""
    total = 0
    split = dict.fromkeys(SPLIT, 0)
    loops: dict = {}
    host_counts: dict = {}
    for stack in thread.get("stacks") or []:
        n = stack.get("n") or 0
        frames = [parse_frame(f) for f in stack.get("frames") or []]
        if not frames:
            continue        # no Python frame at all: the interpreter starting or shutting down
        sample = TrainingSample(frames, cwd)
        total += n
        if sample.kind == "host":
            split["other"] += n
            chain = "<".join(_place(f, cwd) for f in sample.users[:3]) or "?"
            key = f"host:{chain}|?"
        else:
            split[sample.kind] += n
            key = {"waiting_on_dataloader": "dataloader", "making_batches": "dataloader"}.get(sample.kind, sample.kind)
            key = f"{key}|?"
        host_counts[key] = host_counts.get(key, 0) + n
        if sample.loop_line and sample.kind in ("waiting_on_dataloader", "making_batches"):
            loops[sample.loop_line] = loops.get(sample.loop_line, 0) + n
    return {
        "weight": total,
        "split": {k: round(v / total, REPORT_DIGITS) for k, v in split.items()} if total else {},
        "loops": sorted(loops.items(), key=lambda item: -item[1]),
        "counts": host_counts,
    }


def classify_worker(thread: dict, cwd=None) -> dict:
    """A DataLoader worker's time: reading (in a reading library, or a user function named so),
    computing (the dataset's and collate's own work), idle (waiting for indices or to hand a batch
    over); the hottest places it was busy at; and the user's line that started its iterator, when
    a forked worker's stack still shows it."""
    split = {"reading": 0, "computing": 0, "idle": 0}
    hot: dict = {}
    started_at = None
    total = 0
    for stack in thread.get("stacks") or []:
        n = stack.get("n") or 0
        frames = [parse_frame(f) for f in stack.get("frames") or []]
        total += n
        loop = next((i for i, (name, path, _) in enumerate(frames)
                     if WORKER_LOOP[0] in path and _short(name) == WORKER_LOOP[1]), None)
        if loop is None:
            split["idle"] += n
            continue
        if started_at is None:
            started_at = _loop_line(list(reversed(frames[:loop])), cwd)
        below = frames[loop + 1:]
        if not any(FETCH in path for _, path, _ in below):
            split["idle"] += n
            continue
        users = [f for f in below if _is_user(f[1])]
        reading = any(READERS.search(path) for _, path, _ in below) or \
            any(READING_FUNCTION.search(_short(name)) for name, _, _ in users)
        split["reading" if reading else "computing"] += n
        place = users[-1] if users else below[-1]
        key = (_place(place, cwd), "reading" if reading else "computing")
        hot[key] = hot.get(key, 0) + n
    busy = split["reading"] + split["computing"]
    return {
        "weight": total,
        "split": {k: round(v / total, REPORT_DIGITS) for k, v in split.items()} if total else {},
        "busy_share": busy / total if total else 0.0,
        "hot": [{"at": at, "doing": doing, "share": round(n / total, REPORT_DIGITS)}
                for (at, doing), n in sorted(hot.items(), key=lambda item: -item[1])[:HOT]],
        "iterator_at": started_at,
    }


def _is_worker(process: dict) -> bool:
    return any(_has([parse_frame(f) for f in s.get("frames") or []], WORKER_LOOP)
               for t in process.get("threads") or [] for s in (t.get("stacks") or [])[:WORKER_STACKS])


def _training_thread(process: dict):
    """The thread that steps: most samples in forward, backward, the optimizer or the DataLoader."""
    best, best_score = None, 0
    for thread in process.get("threads") or []:
        score = 0
        for stack in thread.get("stacks") or []:
            frames = [parse_frame(f) for f in stack.get("frames") or []]
            if _has(frames, PIN_LOOP) or _has(frames, WORKER_LOOP):
                score = 0
                break
            # Collectives alone do not make a trainer: a launcher's agent (torchrun) waits in
            # torch.distributed too.
            if any(_marker(name, path) in TRAINING_KINDS for name, path, _ in frames):
                score += stack.get("n") or 0
        if score > best_score:
            best, best_score = thread, score
    return best


def roles(stacks: dict) -> dict:
    """{"trainers": [(process, thread)], "workers": [process]} among the sampled processes."""
    trainers, workers = [], []
    for process in stacks.get("processes") or []:
        if _is_worker(process):
            workers.append(process)
            continue
        thread = _training_thread(process)
        if thread is not None:
            trainers.append((process, thread))
    return {"trainers": trainers, "workers": workers}


def _process_figures(system: dict, pid: int) -> dict:
    """CPU seconds, kernel CPU, bytes read from disk and through reads, and seconds alive, of one
    process over the attach (the system sampler's first and last readings of it)."""
    for summary in system.get("processes") or []:
        if summary.get("pid") == pid:
            def grown(name):
                return max((summary.get(name) or 0) - (summary.get(f"{name}_first") or 0), 0)
            return {"cpu_s": grown("user_s") + grown("system_s"), "system_cpu_s": grown("system_s"),
                    "read_bytes": int(grown("read_bytes")), "read_chars": int(grown("read_chars")),
                    "alive_s": max((summary.get("last_seen") or 0) - (summary.get("first_seen") or 0), 0.0)}
    return {}


def _thread_figures(stacks: dict, tid) -> dict:
    return (stacks.get("threads_cpu") or {}).get(str(tid)) or {}


def analyse_attached(stacks: dict, system: dict) -> dict:
    """{"steps", "dataloaders", "attached"} for the report, from the sampled stacks of an attach."""
    window = stacks.get("duration_s") or 0.0
    cwd = stacks.get("cwd")
    found = roles(stacks)
    trainers = []
    for process, thread in found["trainers"]:
        figures = classify_training(thread, cwd)
        if figures["weight"] >= MIN_TRAINING_S * 1e6:
            trainers.append((process, thread, figures))
    workers = {p["pid"]: (p, classify_worker(_main_thread(p), cwd)) for p in found["workers"]}
    rows = [_trainer_row(p, t, f) for p, t, f in trainers]
    if not trainers:
        return {"steps": {"count": 0, "basis": "attached", "data_wait_share": None, "window_s": window},
                "dataloaders": [], "attached": _section(stacks, None, rows, workers)}
    process, thread, figures = headline(trainers)
    steps = _steps(process, thread, figures, stacks, system, window)
    loaders = _loaders(process, thread, figures, workers, stacks, system, window)
    return {"steps": steps, "dataloaders": loaders,
            "attached": _section(stacks, (process, thread, figures, steps["sampled"]), rows, workers)}


STRAGGLER_MARGIN = 0.1      # collective share by which the other ranks must out-wait one to call it the straggler


def headline(trainers: list):
    """The trainer the report speaks for: a straggler (the rank the others wait on in collectives)
    sets the job's pace; among ranks alike, the one whose data wait is nearest the ranks' mean (the
    first of equals), so that one unlucky rank's sample does not speak for the job."""
    if len(trainers) == 1:
        return trainers[0]
    collective = [item[2]["split"].get("collective", 0.0) for item in trainers]
    least = min(collective)
    if sorted(collective)[1] - least >= STRAGGLER_MARGIN:
        return trainers[collective.index(least)]
    mean = sum(_data_share(item[2]) for item in trainers) / len(trainers)
    return min(trainers, key=lambda item: (abs(_data_share(item[2]) - mean), item[0].get("pid") or 0))


def _main_thread(process: dict) -> dict:
    threads = process.get("threads") or []
    main = [t for t in threads if t.get("tid") == process.get("pid")]
    return (main or sorted(threads, key=lambda t: -(t.get("seconds") or 0)) or [{}])[0]


def _data_share(figures: dict) -> float:
    split = figures["split"]
    return split.get("waiting_on_dataloader", 0.0) + split.get("making_batches", 0.0)


def _trainer_row(process, thread, figures) -> dict:
    return {"pid": process.get("pid"), "tid": thread.get("tid"), "seconds": round(figures["weight"] / 1e6, 3),
            "split": figures["split"], "command": process.get("command")}


def _steps(process, thread, figures, stacks, system, window) -> dict:
    share = _data_share(figures)
    source = "dataloader" if figures["loops"] else None
    steps = {
        "count": None, "measured": None, "basis": "attached", "source": "sampled stacks",
        "pid": process.get("pid"), "processes": None, "window_s": window,
        "data_wait_share": round(share, REPORT_DIGITS), "data_wait_source": source,
        "data_wait_s": share * window,
        "median_step_s": None, "mean_step_s": None, "batch_size": None, "steps_per_second": None,
        "samples_per_second": None,
    }
    sampled = analyse_samples([{"counts": figures["counts"]}])
    steps["sampled"] = sampled
    cpu = _thread_figures(stacks, thread.get("tid"))
    process_threads = [v for v in (stacks.get("threads_cpu") or {}).values() if v.get("pid") == process.get("pid")]
    if process_threads and window:
        run = sum(v.get("run_s") or 0.0 for v in process_threads)
        wait = sum(v.get("wait_s") or 0.0 for v in process_threads)
        if run > 0:
            steps["training_cpu"] = {"run_s": round(run, REPORT_DIGITS), "wait_s": round(wait, REPORT_DIGITS),
                                     "wait_share": round(wait / (run + wait), REPORT_DIGITS),
                                     "threads": len(process_threads)}
    if source is None:
        use_sampled_batching(steps)
        if steps.get("data_wait_source") == "sampled" and cpu.get("run_s") is not None and window:
            steps["data_wait_cpu_share"] = _phase_cpu_ratio(cpu["run_s"], steps["data_wait_share"], window)
        elif steps.get("data_wait_source") is None:
            steps["data_wait_share"] = 0.0
    return steps


def _phase_cpu_ratio(run_s: float, share: float, window: float):
    """The CPU share of the training thread while it made batches, from its CPU over the window:
    the rest of its time (the model's work) is taken as running on a CPU, so what is left of its
    CPU is the batches'. An estimate: a GPU job that blocks on the device undercounts it."""
    if share <= 0 or window <= 0:
        return None
    outside = (1.0 - share) * window
    return round(min(max(run_s - outside, 0.0) / (share * window), 1.0), REPORT_DIGITS)


def _loaders(process, thread, figures, workers, stacks, system, window) -> list:
    """One entry per DataLoader loop line of the training thread, in the dataloaders section's shape."""
    if not figures["loops"]:
        return []
    own_workers = [(p, w) for p, w in workers.values() if _parent_of(p) == process.get("pid")]
    lines = {loop for loop, _ in figures["loops"]}
    out = []
    for i, (line, n) in enumerate(figures["loops"]):
        # A forked worker shows the line that started its iterator; where that is not a loop line
        # (iter() on one line, next() on another) or not shown (spawn), the busiest loop has it.
        mine = [(p, w) for p, w in own_workers
                if (w["iterator_at"] if w["iterator_at"] in lines else figures["loops"][0][0]) == line]
        inline = not mine and i == 0 and figures["split"].get("making_batches", 0) > 0
        producer = _inline_producer(process, thread, figures, stacks, system, window) if inline \
            else _worker_producer(mine, system, stacks, window)
        out.append({
            "id": i, "where": line, "built_in": None, "framework": None, "batch_size": None,
            "num_workers": _concurrent(mine, system) if mine else (0 if inline else None),
            "pin_memory": None, "prefetch_factor": None, "persistent_workers": None, "context": None,
            "torch_threads": None, "dataset": None, "sampler": None, "iterable": None,
            "batches": None,
            "wait_s": round(n / figures["weight"] * window, REPORT_DIGITS) if figures["weight"] else None,
            "workers_seen": len(mine), "epochs": None, "epoch_start_wait_s": None,
            "producer": producer, "batch": None, "basis": "attached",
        })
    return out


def _parent_of(process: dict):
    parents = process.get("parents") or []
    return parents[-1] if parents else process.get("ppid")


def _concurrent(workers: list, system: dict) -> int:
    """The most workers alive at once (workers that are not persistent come anew each epoch)."""
    spans = []
    for process, _ in workers:
        for summary in system.get("processes") or []:
            if summary.get("pid") == process.get("pid"):
                spans.append((summary.get("first_seen") or 0.0, summary.get("last_seen") or 0.0))
    if len(spans) < len(workers):
        return len(workers)
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], -e[1]))
    alive = most = 0
    for _, change in edges:
        alive += change
        most = max(most, alive)
    return most or len(workers)


def _worker_producer(workers: list, system: dict, stacks: dict, window: float) -> dict:
    wall = cpu = kernel = queued = 0.0
    read_bytes = read_chars = 0
    for process, figures in workers:
        own = _process_figures(system, process.get("pid"))
        alive = min(own.get("alive_s") or window, window) if own else window
        wall += figures["busy_share"] * alive
        cpu += own.get("cpu_s", 0.0)
        kernel += own.get("system_cpu_s", 0.0)
        read_bytes += own.get("read_bytes", 0)
        read_chars += own.get("read_chars", 0)
        queued += sum(v.get("wait_s") or 0.0 for v in (stacks.get("threads_cpu") or {}).values()
                      if v.get("pid") == process.get("pid"))
    cpu = min(cpu, wall * WORKER_CORES_MAX) if wall > 0 else cpu
    return _producer(wall, cpu, kernel, queued, read_bytes, read_chars, in_main=False)


def _inline_producer(process, thread, figures, stacks, system, window) -> dict:
    share = figures["split"].get("making_batches", 0.0)
    wall = share * window
    own = _thread_figures(stacks, thread.get("tid"))
    ratio = _phase_cpu_ratio(own.get("run_s") or 0.0, share, window) if own.get("run_s") is not None else None
    cpu = (ratio if ratio is not None else 1.0) * wall
    whole = _process_figures(system, process.get("pid"))
    kernel = min(own.get("system_s") or whole.get("system_cpu_s", 0.0), cpu)
    return _producer(wall, cpu, kernel, (own.get("wait_s") or 0.0) * share, whole.get("read_bytes", 0),
                     whole.get("read_chars", 0), in_main=True)


def _producer(wall, cpu, kernel, queued, read_bytes, read_chars, in_main) -> dict:
    return {"batches": None, "wall_s": round(wall, REPORT_DIGITS), "cpu_s": round(cpu, REPORT_DIGITS),
            "system_cpu_s": round(kernel, REPORT_DIGITS), "runqueue_s": round(queued, REPORT_DIGITS),
            "read_bytes": int(read_bytes), "read_chars": int(read_chars),
            "cpu_per_wall": round(cpu / wall, REPORT_DIGITS) if wall > 0 else None, "wall_per_batch_s": None,
            "in_main_process": in_main}


def _section(stacks, headline, rows, workers) -> dict:
    """What the attach saw, for the report's own section."""
    out = {
        "basis": "attached: sampled stacks, no probes",
        "pid": stacks.get("pid"), "window_s": stacks.get("duration_s"), "rate_hz": stacks.get("rate_hz"),
        "ended_early": stacks.get("ended_early"), "stopped_by": stacks.get("stopped_by"),
        "processes_sampled": len(stacks.get("processes") or []),
        "trainers": rows,
        "workers": [{"pid": p.get("pid"), "parent": _parent_of(p), "seconds": round(w["weight"] / 1e6, 3),
                     **{k: w[k] for k in ("split", "hot", "iterator_at")}}
                    for p, w in workers.values()],
        "unknown": ["batch sizes", "batch dtypes and shapes", "copies to the GPU", "HDF5 chunking",
                    "step counts and step times", "the model's precision and layout"],
    }
    if headline is not None:
        process, thread, figures, sampled = headline
        hot = [{"at": item["function"], "share": item["share"]} for item in (sampled.get("host_functions") or [])[:HOT]]
        out["training"] = {"pid": process.get("pid"), "tid": thread.get("tid"), "thread": thread.get("name"),
                           "seconds": round(figures["weight"] / 1e6, 3), "split": figures["split"], "host_hot": hot,
                           "loops": [{"at": line, "share": round(n / figures["weight"], REPORT_DIGITS)}
                                     for line, n in figures["loops"]]}
    return out
