"""Each DataLoader: its settings, where it was built, what its producers spent, what its batches hold."""

from gpuprof.judge.sections.batch_parts import batch_parts
from gpuprof.stats.series import count, total


def pipeline_key(where, role=None, loader_id=None):
    """How loaders are told apart as pipelines: the line that built them and, where the probe saw a
    method named for it (a Trainer's get_eval_dataloader, a DataModule's val_dataloader), their role:
    a framework that builds its training and evaluation loaders at one line gives two pipelines."""
    if not where:
        return loader_id
    return f"{where} [{role}]" if role else where


def entry_key(entry: dict):
    """An analysed loader entry's pipeline key."""
    return pipeline_key(entry.get("where"), entry.get("declared_role"), entry.get("id"))


def loader_of(fetch, loaders_by_id):
    """The loader event a fetch belongs to, or None."""
    if fetch.get("l") is not None:
        return loaders_by_id.get(fetch["l"])
    # Spawn and forkserver workers do not inherit the loader id: match by dataset class.
    return next((x for x in loaders_by_id.values() if x.get("dataset") == fetch.get("ds")), None)


def _matches(fetch, loader, loaders_by_id):
    found = loader_of(fetch, loaders_by_id)
    return found is not None and found["l"] == loader["l"]


def analyse_loaders(loaders, batches, fetches, facts, epochs=()) -> list:
    by_id = {loader["l"]: loader for loader in loaders}
    out = []
    for loader in loaders:
        own_batches = [b for b in batches if b.get("l") == loader["l"]]
        own_fetches = [f for f in fetches if _matches(f, loader, by_id)]
        if not own_batches and not own_fetches:
            continue
        workers = {(f.get("pid"), f.get("w")) for f in own_fetches if f.get("w") is not None}
        wall = total(own_fetches, "wall")
        cpu = total(own_fetches, "cpu")
        kernel = total(own_fetches, "sys")
        queued = total(own_fetches, "rq")
        fetched = sum(count(f) for f in own_fetches)
        starts = sorted(e["t"] for e in epochs if e.get("l") == loader["l"])
        entry = {
            "id": loader["l"],
            "epochs": len(starts),
            "epoch_start_wait_s": _epoch_start_wait(starts, own_batches),
            "where": loader.get("where"),
            "built_in": loader.get("built_in"),
            "framework": loader.get("framework"),
            **({"declared_role": loader["role"], "built_by": loader.get("built_by")} if loader.get("role") else {}),
            **({"collate": loader["collate"]} if loader.get("collate") else {}),
            "batch_size": loader.get("batch_size"),
            "num_workers": loader.get("num_workers"),
            "pin_memory": loader.get("pin_memory"),
            "prefetch_factor": loader.get("prefetch_factor"),
            "persistent_workers": loader.get("persistent_workers"),
            "context": loader.get("context"),
            "torch_threads": loader.get("torch_threads"),
            "dataset": loader.get("dataset"),
            "sampler": loader.get("sampler"),
            "iterable": loader.get("iterable"),
            "batches": sum(count(b) for b in own_batches),
            "wait_s": total(own_batches, "w"),
            "workers_seen": len(workers),
            # Worker ids restart at 0 each epoch (new processes unless persistent): ids, not processes.
            "workers_per_epoch": len({w for _, w in workers}),
            "producer": within_wall({
                "batches": fetched,
                "wall_s": wall,
                "cpu_s": cpu,
                "system_cpu_s": kernel,
                "runqueue_s": queued,
                "read_bytes": int(total(own_fetches, "rb")),
                "read_chars": int(total(own_fetches, "rc")),
                **({"process_cpu_s": total(own_fetches, "pc")} if any("pc" in f for f in own_fetches) else {}),
                **({"collate_s": total(own_fetches, "co"), "collate_cpu_s": total(own_fetches, "cc")}
                   if any("co" in f for f in own_fetches) else {}),
                "cpu_per_wall": None,                                 # within_wall sets it
                "wall_per_batch_s": wall / fetched if fetched else None,
                "in_main_process": not loader.get("num_workers"),
            }),
            "batch": _batch_summary([f for f in facts if f.get("l") == loader["l"]]),
        }
        out.append(entry)
    out = group_by_line(out)
    for entry in out:
        parts = batch_parts(entry)
        if parts is not None:
            entry["batch_parts"] = parts
    out.sort(key=lambda e: -e["batches"])
    return out


def within_wall(producer: dict) -> dict:
    """The producer's figures with its CPU plus its wait for a core no more than its wall time, and
    `cpu_per_wall` from them.

    Each fetch is timed in the thread that makes the batch: its own CPU (getrusage of the thread),
    its wait for a core (schedstat) and its wall time (perf_counter), three clocks read around the
    call. A thread runs, waits for a core or is blocked, one at a time, so CPU plus wait is at most
    the wall time, summed over any number of such threads. More is the clocks' doing: on many
    kernels a thread's CPU moves in whole scheduler ticks (a 150 µs batch reads 0 or 4 ms), and both
    CPU and wait are read a little before the call starts and after it ends. The excess is taken off
    the CPU (the coarse clock; its kernel part in proportion, and the same seconds off the process's
    CPU, whose other threads' share stays as measured), then off the wait."""
    wall = producer.get("wall_s") or 0.0
    cpu, queued = producer.get("cpu_s") or 0.0, producer.get("runqueue_s") or 0.0
    out = dict(producer)
    if wall > 0 and cpu + queued > wall:
        queued_kept = min(queued, wall)
        cpu_kept = wall - queued_kept
        excess = cpu - cpu_kept
        out.update(cpu_s=cpu_kept, runqueue_s=queued_kept,
                   system_cpu_s=(producer.get("system_cpu_s") or 0.0) * (cpu_kept / cpu if cpu > 0 else 0.0))
        if producer.get("process_cpu_s") is not None:
            out["process_cpu_s"] = max(producer["process_cpu_s"] - excess, cpu_kept)
    out["cpu_per_wall"] = out["cpu_s"] / wall if wall > 0 else None
    return out


_SUMMED = ("batches", "wait_s", "workers_seen", "epochs", "epoch_start_wait_s")
_PRODUCER_SUMMED = ("batches", "wall_s", "cpu_s", "system_cpu_s", "runqueue_s", "read_bytes", "read_chars")
_PRODUCER_OPTIONAL = ("process_cpu_s", "collate_s", "collate_cpu_s")


def group_by_line(entries: list) -> list:
    """Loaders built at the same line for the same role (a loader re-created every epoch, in a function
    called again) are one pipeline: one entry with their sums, the settings of the busiest, and how
    many there were."""
    groups: dict = {}
    order = []
    for entry in entries:
        key = entry_key(entry) if entry.get("where") else ("id", entry["id"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(entry)
    out = []
    for key in order:
        members = groups[key]
        if len(members) == 1:
            out.append(dict(members[0], instances=1))
            continue
        busiest = max(members, key=lambda e: e["batches"])
        merged = dict(busiest, instances=len(members), ids=[m["id"] for m in members])
        for name in _SUMMED:
            merged[name] = sum(m.get(name) or 0 for m in members)
        merged["workers_per_epoch"] = max((m.get("workers_per_epoch") or 0) for m in members)
        producer = dict(busiest["producer"])
        for name in _PRODUCER_SUMMED:
            producer[name] = sum((m["producer"].get(name) or 0) for m in members)
        for name in _PRODUCER_OPTIONAL:
            if any(name in m["producer"] for m in members):
                producer[name] = sum((m["producer"].get(name) or 0) for m in members)
        producer["wall_per_batch_s"] = producer["wall_s"] / producer["batches"] if producer["batches"] else None
        merged["producer"] = within_wall(producer)
        merged["batch"] = busiest.get("batch") or next((m["batch"] for m in members if m.get("batch")), None)
        out.append(merged)
    return out


def _epoch_start_wait(starts, batches):
    """Time blocked on the first batch of each epoch: worker start-up and the first fetches."""
    ordered = sorted((b for b in batches if "n" not in b), key=lambda b: b["t"])
    waits = 0.0
    for start in starts:
        first = next((b for b in ordered if b["t"] > start), None)
        if first is not None:
            waits += first.get("w") or 0.0
    return waits


def _batch_summary(facts):
    if not facts:
        return None
    first = min(facts, key=lambda f: f.get("i", 0))
    tensors = first.get("tensors") or []
    if not tensors:
        return None
    main = max(tensors, key=lambda t: t.get("bytes", 0))
    floats = [t for t in tensors if t.get("uint8_candidate") is not None]
    candidate = None
    form = None
    if floats:
        largest_float = max(floats, key=lambda t: t.get("bytes", 0))
        # Only a claim every described batch agrees with.
        same = [t for f in facts for t in f.get("tensors") or [] if t.get("path") == largest_float["path"]]
        candidate = all(t.get("uint8_candidate") for t in same)
        form = largest_float.get("uint8_form") if candidate else None
    return {
        "dtype": main.get("dtype"),
        "shape": main.get("shape"),
        "bytes": sum(t.get("bytes", 0) for t in tensors),
        "largest_tensor": main.get("path"),
        "uint8_candidate": candidate,
        "uint8_form": form,
        "tensors": tensors,
    }
