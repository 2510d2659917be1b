from gpuprof.advice.fixes import training_threads
from tests.unit.fixes.cases import LOADER, evidence, situation, up_to

CONTENDED = situation(findings=[{"bottleneck": "input.cpu", "share": 0.5, "evidence": {"contended": True}}])


def contended(**fields):
    """Two workers on two cores using 0.78 of them; the training's two intra-op threads waited for
    a CPU 44% of the time and ran 0.71 cores; the loop waited 11% of each step (examples/contended_workers.py)."""
    base = dict(loader=dict(LOADER, num_workers=2, torch_threads=2), cpu_count=2, wait_share=0.11,
                producer_cores=0.78, training_cpu_wait=0.44, training_cores=0.71, cores_busy=1.83, cores_free=0.17,
                machine_idle=0.1)
    base.update(fields)
    return evidence(**base)


def test_threads_waiting_beside_workers_get_the_cores_the_workers_leave():
    built = training_threads.build(contended(), CONTENDED)
    assert built["change"] == {"torch_threads": 1}
    assert built["snippet"].startswith("torch.set_num_threads(1)")
    assert abs(built["estimated_speedup"] - 1 / (0.11 + 0.71)) < 1e-9
    assert up_to(built) in built["why"] and "44%" in built["why"]


def test_compute_never_takes_longer_than_today():
    built = training_threads.build(contended(training_cores=1.5, cpu_count=4, producer_cores=1.0,
                                             loader=dict(LOADER, num_workers=2, torch_threads=4)), CONTENDED)
    assert built["change"] == {"torch_threads": 3}
    assert abs(built["estimated_speedup"] - 1 / (0.11 + 0.5)) < 1e-9


def test_not_offered_when_threads_hardly_wait_already_fit_or_there_is_a_gpu():
    assert training_threads.build(contended(training_cpu_wait=0.05), CONTENDED) is None
    assert training_threads.build(contended(loader=dict(LOADER, num_workers=2, torch_threads=1)), CONTENDED) is None
    assert training_threads.build(contended(gpu=True), CONTENDED) is None
    assert training_threads.build(contended(loader=dict(LOADER, num_workers=0, torch_threads=2)), CONTENDED) is None
    assert training_threads.build(contended(), situation("compute", 0.9)) is None


def test_the_keep_line_names_the_call_and_the_loader():
    line = training_threads.FIX.keep({"torch_threads": 1}, "train.py:42")
    assert "torch.set_num_threads(1)" in line and "train.py:42" in line


def test_cpu_taken_by_other_programs_does_not_promise_more_than_every_wait_gone():
    """A loaded machine: the training received 0.1 cores and waited 85% of the time it wanted one;
    the step cannot get shorter than its compute with every wait gone."""
    built = training_threads.build(contended(training_cores=0.1, training_cpu_wait=0.85), CONTENDED)
    assert abs(built["estimated_speedup"] - 1 / (0.11 + 0.89 * 0.15)) < 1e-9
    assert built["estimate_high"] == built["estimated_speedup"]
