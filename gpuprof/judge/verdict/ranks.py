"""Ranks of a distributed job: who trained, where each rank's step went, and who held the others back.

A trainer is a process that stepped and is not a DataLoader worker. Its rank comes from
torch.distributed (the probe notes `init_process_group`), else from the launcher's RANK variable,
else from the order the trainers started. Each rank is analysed as a run of its own (its process and
its workers); this module turns those per-rank analyses into the job's picture.

Attribution rule (docs/distributed.md): in a synchronous job (DDP) every rank's step lasts as long as
the slowest rank's, because the fast ranks wait inside the gradient all-reduce. Step time alone
cannot tell them apart, so each rank's step is split into its own work and its waiting for the
others: waiting = the time sampled in torch.distributed calls made from Python (barrier, all_reduce,
...) plus the part of its backward pass beyond the shortest backward of any rank (the ranks run the
same model, so a longer backward is time blocked in the all-reduce that DDP runs inside it). A rank
whose own work is clearly longer than the others' is the straggler; its own verdict (data wait,
producers' CPU, ...) says why. A rank that mostly waits for the others gets the comm verdict, whose
rule (judge/verdict/bottlenecks/comm.py) reads the waiting share worked out here."""

from gpuprof.judge.verdict.bottlenecks.comm import WAITING_NOTABLE
from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS
from gpuprof.stats.series import median
from gpuprof.record import kinds

STRAGGLER_RATIO = 1.25      # own work this much above the median of the others' names a straggler
NO_RANK_LAST = 10 ** 9      # sorts a trainer without a rank after every ranked one


def trainers(groups: list) -> list:
    """[{pid, host, rank, local_rank, world_size, backend, group_indices}] for every process that
    stepped and is not a DataLoader worker, with the event groups of it and its child processes."""
    info = {}
    for index, events in enumerate(groups):
        if not events or events[0].get("k") != kinds.PROCESS:
            continue
        head = events[0]
        pid = head.get("pid")
        seen = {e.get("k") for e in events}
        fetch_in_worker = any(e.get("k") == kinds.FETCH and e.get("w") is not None for e in events)
        rank_event = next((e for e in events if e.get("k") == kinds.RANK), None)
        info[index] = {"pid": pid, "ppid": head.get("ppid"), "host": head.get("host"), "t": head.get("t") or 0.0,
                       "steps": bool(seen & {kinds.STEP, kinds.BSTEP}), "worker": fetch_in_worker,
                       "rank": (rank_event or {}).get("rank", head.get("rank")),
                       "local_rank": head.get("local_rank"),
                       "world_size": (rank_event or {}).get("world_size", head.get("world_size")),
                       "backend": (rank_event or {}).get("backend")}
    found = [dict(v, group_indices=[i]) for i, v in info.items() if v["steps"] and not v["worker"]]
    for trainer in found:
        for i, other in info.items():
            if other["ppid"] == trainer["pid"] and other["host"] == trainer["host"] and not other["steps"]:
                trainer["group_indices"].append(i)
    found.sort(key=lambda t: (t["rank"] if t["rank"] is not None else NO_RANK_LAST, t["t"]))
    for order, trainer in enumerate(found):
        if trainer["rank"] is None:
            trainer["rank"] = order
            trainer["rank_from"] = "start order"
        else:
            trainer["rank_from"] = "torch.distributed" if trainer["backend"] else "launcher"
    return found


def launcher_world(groups: list) -> dict:
    """{"world_sizes": {int}, "ranks": {int}}: the distributed job a run's processes say they belong
    to, from torch.distributed's own rank (the probe's note after init_process_group) or the
    launcher's RANK and WORLD_SIZE; empty sets for a run no launcher placed in a world."""
    world_sizes, placed = set(), set()
    for events in groups:
        if not events or events[0].get("k") != kinds.PROCESS:
            continue
        head = events[0]
        noted = next((e for e in events if e.get("k") == kinds.RANK), None) or {}
        size, rank = noted.get("world_size", head.get("world_size")), noted.get("rank", head.get("rank"))
        if isinstance(size, int) and size > 1:
            world_sizes.add(size)
            if isinstance(rank, int):
                placed.add(rank)
    return {"world_sizes": world_sizes, "ranks": placed}


def rank_row(trainer: dict, sections: dict, verdict: dict) -> dict:
    """One rank's figures for the report's `ranks` list."""
    steps = sections.get("steps") or {}
    shares = ((steps.get("sampled") or {}).get("shares")) or {}
    loaders = []
    for loader in sections.get("dataloaders") or []:
        producer = loader.get("producer") or {}
        loaders.append({"where": loader.get("where"), "num_workers": loader.get("num_workers"),
                        "batches": loader.get("batches"), "wait_s": loader.get("wait_s"),
                        "wall_per_batch_s": producer.get("wall_per_batch_s"),
                        "cpu_per_wall": producer.get("cpu_per_wall"), "cpu_s": producer.get("cpu_s")})
    return {
        "rank": trainer["rank"], "rank_from": trainer.get("rank_from"), "local_rank": trainer.get("local_rank"),
        "world_size": trainer.get("world_size"), "backend": trainer.get("backend"), "pid": trainer["pid"],
        "host": trainer.get("host"),
        "steps": steps.get("count"), "measured": steps.get("measured"),
        "median_step_s": steps.get("median_step_s"), "mean_step_s": steps.get("mean_step_s"),
        "data_wait_s": steps.get("data_wait_s"), "data_wait_share": steps.get("data_wait_share"),
        "shares": {k: shares.get(k) for k in ("forward", "backward", "optimizer", "collective", "dataloader", "host")
                   if shares.get(k) is not None},
        "backward_share": steps.get("backward_share"),
        "loaders": loaders,
        "producers_cpu_s": round(sum(l.get("cpu_s") or 0.0 for l in loaders), 3),
        "verdict": {k: verdict.get(k) for k in ("bottleneck", "share", "confidence", "reason", "summary")},
        **({"device_comm_share": _device_comm_share(sections)} if _device_comm_share(sections) is not None else {}),
    }


def judge(rows: list) -> dict:
    """The job's picture from its ranks' rows (rows gain `waiting_share` and `own_step_s`):
    {"headline_rank", "straggler", "speedup_if_median", "same_bottleneck"}."""
    usable = [r for r in rows if r.get("mean_step_s")]
    if not usable:
        return {"headline_rank": rows[0]["rank"] if rows else None, "straggler": None, "speedup_if_median": None,
                "same_bottleneck": None}
    backward = [_backward(r) for r in usable if _backward(r) is not None]
    fastest_backward = min(backward) if backward else 0.0
    for row in usable:
        shares = row["shares"]
        waiting = (shares.get("collective") or 0.0) + max((_backward(row) or 0.0) - fastest_backward, 0.0)
        waiting = max(waiting, row.get("device_comm_share") or 0.0)
        row["waiting_share"] = round(min(waiting, 1.0), REPORT_DIGITS)
        row["own_step_s"] = row["mean_step_s"] * (1.0 - row["waiting_share"])
    slowest = max(usable, key=lambda r: r["own_step_s"])
    others = [r["own_step_s"] for r in usable if r is not slowest]
    typical = median_rank([r["own_step_s"] for r in usable])
    straggler = None
    rest = [r for r in usable if r is not slowest]
    if others and slowest["own_step_s"] >= STRAGGLER_RATIO * median(others) and _held_back(slowest, rest):
        straggler = _straggler(slowest, rest)
    bottlenecks = {r["verdict"].get("bottleneck") for r in usable}
    return {"headline_rank": slowest["rank"], "straggler": straggler,
            "speedup_if_median": round(slowest["own_step_s"] / typical, 3) if typical else None,
            "same_bottleneck": bottlenecks.pop() if len(bottlenecks) == 1 else None}


def _device_comm_share(sections: dict):
    """The share of a GPU rank's step its exposed all-reduce took on the device (DDP's own CUDA-event
    timing), where DDP gave it: a rank whose GPU finished first waits inside NCCL's kernels for the
    others while its host has long run ahead, so the host's own clocks and stacks do not see it."""
    comm = sections.get("ddp_comm") or {}
    return comm.get("exposed_comm_share") if comm.get("device_timed") else None


def _backward(row: dict):
    """The share of the step in backward(): timed by the step probe, else sampled."""
    timed = row.get("backward_share")
    return timed if timed is not None else row["shares"].get("backward")


def _held_back(slow: dict, others: list) -> bool:
    """Did the others lose time to the slow rank? In a synchronous job they wait for it (a notable
    share of their step); in one without collectives its steps are simply longer. Two ranks that
    share a few cores differ by some 10-20% in how long their backward takes, without either
    holding the other back: that alone names no straggler."""
    waiting = median([r.get("waiting_share") or 0.0 for r in others])
    steps = median([r["mean_step_s"] for r in others])
    return waiting >= WAITING_NOTABLE or slow["mean_step_s"] >= STRAGGLER_RATIO * steps


def median_rank(values: list) -> float:
    """The own work of the median rank: an actual rank's (the lower one of an even count), so that
    with two ranks it is the other rank, not a mean of the two."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _straggler(slow: dict, others: list) -> dict:
    """The evidence that names a straggler: its own work, data wait and producers against the others'."""
    def typical(key):
        values = [r.get(key) for r in others if r.get(key) is not None]
        return median(values) if values else None

    return {
        "rank": slow["rank"], "host": slow.get("host"), "pid": slow["pid"],
        "cause": slow["verdict"].get("bottleneck"),
        "own_step_s": round(slow["own_step_s"], FINE_DIGITS),
        "others_own_step_s": round(typical("own_step_s"), FINE_DIGITS),
        "data_wait_share": slow.get("data_wait_share"), "others_data_wait_share": typical("data_wait_share"),
        "producers_cpu_s": slow.get("producers_cpu_s"), "others_producers_cpu_s": typical("producers_cpu_s"),
        "others_waiting_share": typical("waiting_share"),
    }


def job_summary(verdict: dict, rows: list, picture: dict) -> str:
    """The headline for the job: the slowest rank's bottleneck, and what evening the ranks would buy."""
    n = len(rows)
    straggler = picture.get("straggler")
    speedup = picture.get("speedup_if_median")
    if straggler:
        where = f" on {straggler['host']}" if straggler.get("host") else ""
        wait = straggler.get("others_waiting_share")
        tail = (f" The other ranks wait for it {wait:.0%} of their step" if wait else " The other ranks wait for it")
        tail += (f"; were it as fast as the median rank, the job would be up to {speedup:.2f}x faster." if speedup
                 else ".")
        return f"Rank {straggler['rank']}{where} holds the job back. {verdict.get('summary', '')}{tail}"
    if picture.get("same_bottleneck") and n > 1:
        return f"All {n} ranks alike. {verdict.get('summary', '')}"
    return f"Slowest of {n} ranks: rank {picture.get('headline_rank')}. {verdict.get('summary', '')}"
