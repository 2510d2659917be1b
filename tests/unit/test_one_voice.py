"""One voice: the report's statements come from the same figures, so none contradicts another:
idle cores and "every core in use", CPU shares within the job's cores, workers counted per epoch."""

from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.sections.loaders import analyse_loaders
from gpuprof.present.render import formats
from gpuprof.present.render.units import producing_cpu, workers_words
from tests.unit.test_verdict_and_advice import sections

NO_RECORD = {"meta": {}, "system": {}, "gpu": {}, "processes": []}


def pressured(idle: float, cores_busy: float) -> dict:
    """Producers CPU-bound, threads waiting for a core 30% of the time (a CPU quota does that)."""
    data = sections(wait=0.6, workers=2, cpu=0.95, cores_busy=cores_busy, idle=idle)
    data["system"]["pressure"]["cpu_some"] = 0.3
    return data


def test_idle_cores_are_never_called_every_core_in_use():
    result = classify(pressured(idle=0.34, cores_busy=0.6))
    ev = result["evidence"]
    assert ev.contended and not ev.no_idle_core and ev.idle_cores > 0.6
    report = {"command": ["python", "train.py"], "outcome": "exited with status 0", "duration_s": 10.0,
              "verdict": result["verdict"], "findings": result["findings"], "advice": [], "steps": {},
              "system": {"cpu_count": 2, "cpu": {"idle": 0.34}}}
    for fmt in ("console", "markdown", "html"):
        assert "every core in use" not in formats.render(fmt, report, record=NO_RECORD), fmt
    assert "cores are idle" in result["verdict"]["summary"]


def test_no_idle_core_says_every_core_in_use_with_the_same_figure():
    result = classify(pressured(idle=0.02, cores_busy=1.95))
    assert result["evidence"].no_idle_core
    assert "every core in use (0.0 of 2 idle)" in result["verdict"]["summary"]


def test_producer_cpu_never_reads_above_the_job_s_cores():
    assert producing_cpu(0.99, 2) == "99%"
    assert producing_cpu(5.25, 2) == "2.0 of 2 cores"
    assert producing_cpu(1.6, 4) == "1.6 of 4 cores"
    data = sections(wait=0.8, cpu=5.25)            # clocks of short batches can read above one core
    assert classify(data)["evidence"].producer_cpu_ratio <= 2


def fetches(epochs: int, workers: int, persistent: bool) -> list:
    out = []
    for epoch in range(epochs):
        for w in range(workers):
            pid = 100 + w if persistent else 100 + epoch * workers + w
            out.append({"k": "fetch", "l": 1, "w": w, "pid": pid, "wall": 0.1, "cpu": 0.09, "n": 5})
    return out


def test_workers_are_counted_per_epoch_not_per_process():
    loader = {"l": 1, "where": "train.py:10", "num_workers": 2}
    epochs = [{"l": 1, "t": 0.0}, {"l": 1, "t": 5.0}]
    fresh = analyse_loaders([loader], [], fetches(2, 2, persistent=False), [], epochs)[0]
    assert fresh["workers_seen"] == 4 and fresh["workers_per_epoch"] == 2
    assert workers_words(fresh) == "2 workers (2 epochs)"
    kept = analyse_loaders([loader], [], fetches(2, 2, persistent=True), [], epochs)[0]
    assert kept["workers_per_epoch"] == 2 and workers_words(kept) == "2 workers (2 epochs)"
