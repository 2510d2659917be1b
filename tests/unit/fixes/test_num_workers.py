from gpuprof.advise.fixes import num_workers
from tests.unit.fixes.cases import LOADER, evidence, situation, up_to


def test_a_cpu_bound_single_process_loader_gets_workers_and_the_reason_gives_the_estimate():
    built = num_workers.build(evidence(gpu=True), situation())
    assert built["change"]["num_workers"] >= 2 and built["change"]["persistent_workers"] is True
    assert built["where"] == "train.py:42" and "num_workers 0 ->" in built["detail"]
    assert up_to(built) in built["why"]
    assert 1.05 <= built["estimated_speedup"] <= 1 / (1 - 0.6) + 1e-9


def test_on_a_cpu_only_machine_workers_come_with_fewer_intra_op_threads():
    built = num_workers.build(evidence(cpu_count=2, cores_free=1.0), situation())
    assert built["change"]["torch_threads"] == 2 - built["change"]["num_workers"] or built["change"]["torch_threads"] == 1
    assert built["snippet"].startswith("torch.set_num_threads(")


def test_no_workers_for_a_contended_cpu_or_a_loader_already_at_the_bound():
    contended = situation(findings=[{"bottleneck": "input.cpu", "share": 0.4, "evidence": {"contended": True}}])
    assert num_workers.build(evidence(), contended) is None
    at_bound = evidence(loader=dict(LOADER, num_workers=16), wait_source="dataloader")
    assert num_workers.build(at_bound, situation("input.disk")) is None


def test_no_input_bottleneck_no_workers():
    assert num_workers.build(evidence(), situation("compute", 0.02)) is None


def test_a_worker_count_the_memory_cannot_hold_is_bounded_and_says_why():
    ev = evidence(loader=dict(LOADER, num_workers=2), memory_available=9 * 2**30, process_rss=1536 * 2**20)
    built = num_workers.build(ev, situation("input.latency"))
    assert built["change"]["num_workers"] == 3          # half of 9 GiB at 1.5 GiB a process
    assert "the machine holds at most 3 (memory: 9.0 GiB available" in built["why"]
    tight = evidence(loader=dict(LOADER, num_workers=2), memory_available=4 * 2**30, process_rss=1536 * 2**20)
    assert num_workers.build(tight, situation("input.latency")) is None     # never fewer than today's


def test_no_set_num_threads_where_the_process_already_keeps_one_thread():
    """torchrun starts each rank with OMP_NUM_THREADS=1: advising torch.set_num_threads(1) changes nothing."""
    built = num_workers.build(evidence(cpu_count=2, cores_free=1.0, loader=dict(LOADER, torch_threads=1)), situation())
    assert "torch_threads" not in built["change"] and "set_num_threads" not in built["snippet"]
