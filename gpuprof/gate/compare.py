"""Two runs side by side (`gpuprof compare A B`): their step times with the noise of each, whether
B differs from A beyond that noise, their verdicts and phase shares, what changed between them and
what fixes they were made with. Pure: two reports (with any extra rounds of each) in, a versioned
comparison dict (`gpuprof.compare/1`) out.

The statistics are the gate's (gpuprof.gate.decide: the steady median step time of each side and
its noise, a change counting only beyond NOISE_Z times the two sides' combined noise), `try`'s
(gpuprof.stats.noise.SAME: a change within 3% is no change) and the report's (gpuprof.judge.
machine_load: the cores other processes kept busy), so that compare, gate and try never disagree on
a number. It sits beside the gate, whose regression check `--fail-if-slower` is."""

import math

from gpuprof.judge.sections.machine_load import machine_during, notable
from gpuprof.stats.noise import SAME
from gpuprof.gate.decide import FAIL, MISSING, NOISE_Z, decide, step_kind, step_statistic
from gpuprof.gate.decide import program_of as gate_program

COMPARE_FORMAT = "gpuprof.compare/1"

FASTER, SLOWER, WITHIN_NOISE, DISTURBED, NOT_MEASURED = (
    "faster", "slower", "within noise", "disturbed", "not measured")

#: Facts never recorded by older gpuprof versions: listed as "not recorded" when both lack them.
PROVENANCE_FACTS = ("git commit", "uncommitted changes", "torch", "CUDA", "python")

LOADER_KEYS = ("num_workers", "pin_memory", "prefetch_factor", "persistent_workers", "context", "torch_threads")


class Incomparable(ValueError):
    """Two things that are not runs of one program (bad input: exit 2)."""


def side(report: dict, path: str = "", source: str = "run folder", rounds=(), changes: dict = None,
         tried: list = None) -> dict:
    """One side of a comparison as the workflow hands it over: a report, more runs of the same
    code (a try folder's baseline rounds), the changes it was made with and, for a try folder,
    the variants tried there."""
    return {"report": report, "path": path, "source": source, "rounds": list(rounds), "changes": changes,
            "tried": tried}


def compare(a: dict, b: dict, fail_if_slower: float = None, force: bool = False) -> dict:
    """The comparison of side `b` against side `a` (the baseline). `fail_if_slower` is a percentage:
    the gate's regression check with that limit decides `gate.failed`. Raises Incomparable for
    runs of two different programs unless `force`."""
    if not force:
        check_comparable(a["report"], b["report"])
    kind = step_kind(runs_of(a), runs_of(b))
    sa, sb = summary(a, kind), summary(b, kind)
    step = step_change(sa, sb)
    call = call_of(sa, sb, step)
    return {
        "format": COMPARE_FORMAT,
        "a": sa,
        "b": sb,
        "step": step,
        "call": call,
        "phases": phases(a["report"], b["report"]),
        **facts(a["report"], b["report"]),
        "notes": notes(sa, sb, a["report"], b["report"]),
        "gate": gate_check(a, b, fail_if_slower, call, force),
    }


def notes(sa: dict, sb: dict, ra: dict, rb: dict) -> list:
    """What the reader must know to trust the call: step times of different batch sizes, and a
    noise measured within one run only."""
    out = []
    size_a, size_b = (ra.get("steps") or {}).get("batch_size"), (rb.get("steps") or {}).get("batch_size")
    if size_a and size_b and size_a != size_b:
        out.append(f"the batch sizes differ ({size_a} vs {size_b}): a step does different work, so compare "
                   "the throughput (samples/s)")
    if sa["runs"] == 1 and sb["runs"] == 1 and sa["step_s"] and sb["step_s"]:
        out.append("each side is one run: its noise is the spread of its own steps, and runs of the same code "
                   "differ more than that on a busy machine; try folders (several rounds) measure it")
    return out


def program_of(report: dict) -> str:
    return gate_program(report)


def check_comparable(ra: dict, rb: dict) -> None:
    pa, pb = program_of(ra), program_of(rb)
    if pa != pb:
        raise Incomparable(f"A is a run of {pa!r} and B of {pb!r}: not two runs of one program "
                           "(--force compares them anyway)")


def runs_of(s: dict) -> list:
    """A side's runs: its report, then its other rounds."""
    return [s["report"]] + list(s.get("rounds") or [])


def summary(s: dict, kind: str = None) -> dict:
    """What one side measured: its step time and noise (the gate's step_statistic over its runs, by
    `kind`: the steady median, or the mean where a run of either side split into instant and waiting
    steps), its throughput over the same runs, verdict, whether the machine was disturbed, and what
    it was made with."""
    report = s["report"]
    reports = runs_of(s)
    step_s, noise, statistic = step_statistic(reports, kind)
    steps = report.get("steps") or {}
    verdict = report.get("verdict") or {}
    return {
        "path": s.get("path") or report.get("run_dir") or "",
        "source": s.get("source") or "run folder",
        "program": program_of(report),
        "runs": len(reports),
        "step_s": step_s,
        "statistic": statistic,
        "noise": noise,
        "interval_s": [step_s * (1 - noise), step_s * (1 + noise)] if step_s and noise is not None else None,
        "steady_steps": (steps.get("steady") or {}).get("steps"),
        "samples_per_second": throughput(reports),
        "verdict": {"bottleneck": verdict.get("bottleneck"), "summary": verdict.get("summary")},
        "disturbed": disturbance(reports),
        "changes": s.get("changes") or None,
        "tried": s.get("tried") or None,
    }


def throughput(reports: list):
    """The side's samples/s over the same runs as its step time: the median over its runs (one run:
    its own), so a try folder's throughput is not its first round's beside its rounds' step time."""
    rates = sorted(r for r in (((report or {}).get("steps") or {}).get("samples_per_second") for report in reports)
                   if r)
    if not rates:
        return None
    middle = len(rates) // 2
    return rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2


def disturbance(reports: list):
    """What the samplers saw other processes do, for the first run of a side whose machine was busy
    with them (the report's `system.others` over its measured steps; for an older report, its
    whole run), or None for a quiet machine."""
    for report in reports:
        others = ((report or {}).get("system") or {}).get("others")
        if others is None:
            machine = machine_during(report)
            other, cores = machine.get("other_cores"), machine.get("cpu_count") or 1
            others = {"other_cores": other, "cpu_count": cores, "steal": machine.get("steal"),
                      "notable": notable(other, cores)}
        if others.get("notable"):
            return {"other_cores": others["other_cores"], "cpu_count": others["cpu_count"],
                    "steal": others.get("steal")}
    return None


def step_change(sa: dict, sb: dict) -> dict:
    """B's steady median step time over A's, and whether the change is beyond the two sides' noise
    (NOISE_Z x the combined noise, as the gate counts it) and beyond SAME. The change is measured as
    a log ratio, which a relative noise bounds the same way in either direction: a step 36x faster is
    a change of 3.6 there, never the -0.97 that no noise above 50% could clear."""
    before, now = sa["step_s"], sb["step_s"]
    if not before or not now:
        return {"ratio": None, "speedup": None, "change": None, "noise": None, "counts_beyond": None,
                "beyond_noise": False}
    change = now / before - 1.0
    noise = ((sa["noise"] or 0.0) ** 2 + (sb["noise"] or 0.0) ** 2) ** 0.5
    counts_beyond = max(NOISE_Z * noise, SAME)
    return {"ratio": now / before, "speedup": before / now, "change": change, "noise": noise,
            "counts_beyond": counts_beyond, "beyond_noise": abs(math.log(now / before)) > counts_beyond}


def call_of(sa: dict, sb: dict, step: dict) -> str:
    """faster / slower (B against A) only beyond the noise; a side whose machine was disturbed
    makes no call at all."""
    if step["ratio"] is None:
        return NOT_MEASURED
    if sa["disturbed"] or sb["disturbed"]:
        return DISTURBED
    if not step["beyond_noise"]:
        return WITHIN_NOISE
    return FASTER if step["change"] < 0 else SLOWER


def phases(ra: dict, rb: dict) -> list:
    """Each part of the step time side by side: measured shares (data wait, copies, backward),
    then the shares the stack samples found, where either side has them."""
    def measured(report):
        steps, copies = report.get("steps") or {}, report.get("copies") or {}
        return {"data wait": steps.get("data_wait_share"), "host-to-device copies": copies.get("share"),
                "backward": steps.get("backward_share")}

    def sampled(report):
        shares = ((report.get("steps") or {}).get("sampled") or {}).get("shares") or {}
        return {f"sampled: {name}": value for name, value in shares.items()}

    rows = []
    for pick in (measured, sampled):
        left, right = pick(ra), pick(rb)
        # a part the stack samples never caught took none of a sampled run's time
        absent = 0.0 if pick is sampled else None
        for name in list(left) + [n for n in right if n not in left]:
            if left.get(name) is not None or right.get(name) is not None:
                rows.append({"phase": name, "a": left.get(name, absent if left else None),
                             "b": right.get(name, absent if right else None)})
    return rows


def facts(ra: dict, rb: dict) -> dict:
    """{"changed": [{fact, a, b}], "unchanged": [fact], "not_recorded": [fact]}: what each run was
    made of, compared."""
    fa, fb = run_facts(ra), run_facts(rb)
    changed, unchanged, missing = [], [], []
    for name in fa:
        left, right = fa[name], fb[name]
        if left is None and right is None:
            if name in PROVENANCE_FACTS:
                missing.append(name)
        elif left == right:
            unchanged.append(name)
        else:
            changed.append({"fact": name, "a": left, "b": right})
    return {"changed": changed, "unchanged": unchanged, "not_recorded": missing}


def run_facts(report: dict) -> dict:
    """The facts a report holds about how its run was made, by their names in the comparison."""
    recorded = report.get("provenance") or {}
    git = recorded.get("git") or {}
    steps = report.get("steps") or {}
    system = report.get("system") or {}
    limit = system.get("cpu_limit") or {}
    loader = training_loader(report)
    out = {
        "command": " ".join(str(word) for word in report.get("command") or []) or None,
        "git commit": git.get("commit"),
        "uncommitted changes": git.get("dirty"),
        "torch": recorded.get("torch"),
        "CUDA": (recorded.get("cuda") or "none (a CPU build of torch)") if recorded.get("torch") else None,
        "python": recorded.get("python"),
        "gpuprof version": recorded.get("gpuprof_version") or report.get("gpuprof_version"),
        "batch size": steps.get("batch_size"),
    }
    for key in LOADER_KEYS:
        out[key] = loader.get(key) if loader else None
    out.update({
        "GPU": gpu_models(report),
        "CPU cores": system.get("cpu_count"),
        "CPU affinity (cores)": limit.get("affinity_cpus"),
        "cgroup CPU quota (cores)": limit.get("quota_cpus"),
        "cgroup memory limit (bytes)": limit.get("memory_limit_bytes"),
    })
    return out


def training_loader(report: dict):
    """The DataLoader the training steps drew from: the one that served the most batches."""
    loaders = [row for row in report.get("dataloaders") or [] if isinstance(row, dict)]
    if not loaders:
        return None
    return max(loaders, key=lambda row: row.get("batches") or 0)


def gpu_models(report: dict):
    """The job's GPU models ("2 x NVIDIA H100"), from the CUDA devices its processes used, else
    every GPU NVML saw; None without any."""
    names = [d.get("name") for d in report.get("cuda_devices") or [] if isinstance(d, dict) and d.get("name")]
    if not names:
        names = [g.get("name") for g in (report.get("system") or {}).get("gpus") or []
                 if isinstance(g, dict) and g.get("name")]
    if not names:
        return None
    counted: dict = {}
    for name in names:
        counted[name] = counted.get(name, 0) + 1
    return ", ".join(f"{n} x {name}" if n > 1 else name for name, n in sorted(counted.items()))


def gate_check(a: dict, b: dict, fail_if_slower, call: str, force: bool = False):
    """The gate's regression check of B against A with the limit `fail_if_slower` (a percentage):
    fails when B is slower by more than it and beyond the noise. A disturbed side is not judged; runs
    of different batch sizes are refused as the gate refuses them (GateInputError) unless `force`."""
    if fail_if_slower is None:
        return None
    limit = fail_if_slower / 100.0
    result = decide(b["report"], {"max_regression": limit}, baseline=a["report"], force=force,
                    rounds=b.get("rounds") or (), baseline_rounds=a.get("rounds") or ())
    check = result.checks[0]
    # A check that cannot measure fails, as the gate's do: a gate must not pass quietly.
    failed = check.status in (FAIL, MISSING) and call != DISTURBED
    detail = check.detail
    if call == DISTURBED and check.status == FAIL:
        detail += "; not judged: a run's machine was disturbed by other processes"
    return {"fail_if_slower_pct": fail_if_slower, "status": check.status if call != DISTURBED else DISTURBED,
            "failed": failed, "change": check.measured, "detail": detail}
