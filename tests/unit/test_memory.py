"""Memory through its seams: the probe's CUDA counters with a fake torch.cuda (no CUDA here), the
anatomy of a real optimizer, and the analysis of growth, headroom and out-of-memory ends."""

import pytest

torch = pytest.importorskip("torch")

from gpuprof.advise.oom import oom_advice  # noqa: E402
from gpuprof.judge.verdict.bottlenecks.memory_oom import verdict as oom_verdict  # noqa: E402
from gpuprof.judge.sections.memory import analyse_memory, growth  # noqa: E402
from gpuprof.capture.probes import memory as probe  # noqa: E402
from gpuprof.capture.probes.stream import Stream  # noqa: E402
from gpuprof.record.packed import rows_of  # noqa: E402


class FakeCuda:
    """torch.cuda's per-device counters for one device (no memory_stats_as_nested_dict: the
    probe falls back to the four counter functions)."""

    def __init__(self):
        self.allocated = 100 << 20

    def current_device(self):
        return 0

    def device_count(self):
        return 1

    def memory_allocated(self, device=None):
        self.allocated += 1 << 20
        return self.allocated

    def max_memory_allocated(self, device=None):
        return self.allocated + (50 << 20)

    def memory_reserved(self, device=None):
        return 512 << 20

    def max_memory_reserved(self, device=None):
        return 600 << 20


class Collect:
    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(event)

    def emit_line(self, line):
        self.events.append(line)


def test_the_probe_reads_cuda_counters_and_the_anatomy_once(monkeypatch):
    sink = Collect()
    emitted = []
    monkeypatch.setitem(probe._state, "stream", Stream("mem", ("rss", "alloc", "peak", "reserved"), full=100, sink=sink))
    monkeypatch.setitem(probe._state, "cuda", FakeCuda())
    monkeypatch.setitem(probe._state, "seen", set())
    monkeypatch.setattr(probe.runtime, "emit", emitted.append)
    model = torch.nn.Linear(10, 10)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 10)).sum().backward()
    optimizer.step()
    for t in range(3):
        probe.on_step(optimizer, float(t))
    probe._state["stream"].flush()
    rows = [row for event in sink.events if isinstance(event, str) for row in rows_of(__import__("json").loads(event))]
    assert [row[2] for row in rows] == [101 << 20, 102 << 20, 103 << 20]          # memory_allocated per step
    assert rows[0][1] > 0                                                          # the process's RSS too
    anatomy = [e for e in emitted if e.get("k") == "memory_anatomy"]
    assert len(anatomy) == 1 and anatomy[0]["params"] == 110 and anatomy[0]["grad_bytes"] == 440
    assert anatomy[0]["state_bytes"] >= 880                                        # exp_avg, exp_avg_sq (+ step)


def mem(t, alloc=None, rss=None, peak=None):
    return {"k": "mem", "pid": 1, "t": t, "alloc": alloc, "rss": rss, "peak": peak}


def anatomy_event(params=1_000_000):
    return {"k": "memory_anatomy", "pid": 1, "optimizer": "AdamW", "params": params,
            "param_bytes": {"float32": 4 * params}, "grad_bytes": 4 * params, "state_bytes": 8 * params,
            "state": ["exp_avg", "exp_avg_sq"]}


STEPS = {"pid": 1, "count": 40, "window_start": 0.5, "window_end": 40.5, "batch_size": 32}
GPU = {"gpus": [{"mem_total_bytes": 1 << 30}], "memory": {"available_bytes": 8 << 30, "events": {}}}


def test_on_a_gpu_the_peak_less_the_anatomy_is_activations_and_sets_the_largest_batch():
    events = [mem(float(i), alloc=200 << 20, peak=16_000_000 + (256 << 20)) for i in range(41)]
    memory = analyse_memory([anatomy_event()], events, [], STEPS, [], GPU, {})
    assert memory["device"] == "cuda" and memory["rest_bytes"] == 256 << 20       # 272 MiB peak - 16 MB held
    # (0.9 GiB - 16 MB) / (256 MiB per 32 samples) -> about 113 samples
    assert 100 <= memory["headroom"]["largest_batch"] <= 120
    assert memory["findings"] == []                                               # flat: no growth


def test_steady_growth_is_a_finding_with_the_steps_left():
    events = [mem(float(i), rss=(500 << 20) + i * (4 << 20)) for i in range(41)]
    memory = analyse_memory([], events, [], STEPS, [], GPU, {})
    found = memory["findings"][0]
    assert found["kind"] == "growth" and found["slope_bytes_per_step"] == 4 << 20
    assert found["steps_until_exhausted"] == (8 << 30) // (4 << 20)
    noisy = [mem(float(i), rss=(500 << 20) + (i % 2) * (40 << 20)) for i in range(41)]
    assert analyse_memory([], noisy, [], STEPS, [], GPU, {})["findings"] == []
    assert growth([(0.0, 1.0, 1)]) is None


def test_out_of_memory_by_exception_or_by_the_kernel():
    exception = {"k": "exception", "pid": 1, "type": "OutOfMemoryError", "memory": True}
    memory = analyse_memory([anatomy_event()], [mem(1.0, alloc=1, peak=900 << 20)], [exception], STEPS, [], GPU, {})
    verdict = oom_verdict(memory, {"summary": "Compute-bound"})
    assert verdict["bottleneck"] == "memory.oom" and "raised OutOfMemoryError after 40 steps" in verdict["summary"]
    assert "empty_cache() is not a fix" in verdict["summary"]
    ranked = oom_advice(memory, 32)
    assert [a["frees_bytes"] for a in ranked] == sorted((a["frees_bytes"] or 0 for a in ranked), reverse=True)
    assert ranked[0]["id"] in ("activation-checkpointing", "smaller-batch-accumulate", "mixed-precision-memory")
    killed = dict(GPU, memory={"events": {"oom_kill": 1, "cgroup_oom_kill": 1}})
    memory = analyse_memory([], [], [], STEPS, [], killed, {"signal": "SIGKILL"})
    assert memory["oom"]["kind"] == "oom-killer"
    assert analyse_memory([], [], [], STEPS, [], GPU, {"signal": "SIGKILL"})["oom"] is None


LONG = {"pid": 1, "count": 400, "window_start": 0.5, "window_end": 400.5, "batch_size": 32}


def test_a_slow_steady_leak_is_judged_by_where_it_leads_not_by_the_short_runs_total():
    import random
    rng = random.Random(7)
    # 40 KB a step with allocator noise: 16 MB over 400 steps, under the fast-leak total, 3.8 GiB per 100,000 steps
    slow = [mem(float(i), rss=(500 << 20) + i * 40_000 + rng.randrange(0, 400_000)) for i in range(401)]
    found = analyse_memory([], slow, [], LONG, [], GPU, {})["findings"]
    assert found and found[0]["kind"] == "growth" and "KiB per step" in found[0]["summary"]
    assert found[0]["projected_bytes"] > 3 << 30 and "per 100,000 steps" in found[0]["summary"]
    # the same total reached by warm-up that then levels off is no leak
    plateau = [mem(float(i), rss=(500 << 20) + min(i, 150) * 100_000 + rng.randrange(0, 400_000)) for i in range(401)]
    assert analyse_memory([], plateau, [], LONG, [], GPU, {})["findings"] == []
    # nor is a slow steady drift too small to matter over a long run (1 KB a step)
    drift = [mem(float(i), rss=(500 << 20) + i * 1_000) for i in range(401)]
    assert analyse_memory([], drift, [], LONG, [], GPU, {})["findings"] == []


def worker(pid, first, last, first_clues=None, last_clues=None):
    return [{"k": "worker_mem", "pid": pid, "t": 1.0, "private": first, "first": True, "clues": first_clues or {}},
            {"k": "worker_mem", "pid": pid, "t": 5.0, "private": last, "first": False, "clues": last_clues or {}}]


def worker_finding(events):
    return next(f for f in analyse_memory([], [], [], STEPS, events, GPU, {})["findings"] if f["kind"] == "worker_growth")


def test_worker_growth_names_the_cause_its_clues_show_or_says_it_is_not_known():
    buffer = {"buffers": [{"function": "shuffled", "local": "buffer", "type": "list", "items": 1000,
                           "bytes": 70 << 20, "file": "/x/pipe.py", "line": 9}]}
    found = worker_finding(worker(1, 20 << 20, 95 << 20, last_clues=buffer) + worker(2, 20 << 20, 93 << 20))
    assert "shuffle buffer" in found["summary"] and "pipe.py:9" in found["summary"] and found["cause_known"]
    assert "copy-on-write" not in found["summary"]
    table = {"attributes": {"values": ["list", 3_000_000]}}
    found = worker_finding(worker(1, 20 << 20, 95 << 20, table, table))
    assert "copy-on-write" in found["summary"] and "numpy arrays" in found["fix"]
    cache = worker(1, 20 << 20, 95 << 20, {"attributes": {"cache": ["dict", 150]}},
                   {"attributes": {"cache": ["dict", 9_000]}})
    assert "`cache` (dict) grew to 9,000 items" in worker_finding(cache)["summary"]
    unknown = worker_finding(worker(1, 20 << 20, 95 << 20))
    assert not unknown["cause_known"] and "not known" in unknown["summary"]
    assert "copy-on-write of Python objects. A Dataset" not in unknown["summary"]
