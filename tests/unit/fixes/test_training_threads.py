from gpuprof.advise.fixes import training_threads
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
    # The ends: the threads' CPU spread over the one core left; every moment one of two was held up gone.
    low, high = 1 / (0.11 + 0.71), 1 / (0.11 + 0.89 * 0.56 ** 2)
    assert abs(built["estimate_low"] - low) < 1e-9 and abs(built["estimate_high"] - high) < 1e-9
    assert abs(built["estimated_speedup"] - (low * high) ** 0.5) < 1e-9
    # The user's own torch.set_num_threads(1) on this program measured 1.37-1.39x (docs/benchmarks.md).
    assert low <= 1.37 <= high
    assert up_to(built) in built["why"] and "44%" in built["why"]


def test_compute_spreads_its_cpu_time_over_the_cores_left():
    built = training_threads.build(contended(training_cores=1.5, cpu_count=4, producer_cores=1.0,
                                             loader=dict(LOADER, num_workers=2, torch_threads=4)), CONTENDED)
    assert built["change"] == {"torch_threads": 3}
    assert abs(built["estimate_low"] - 1 / (0.11 + 0.5)) < 1e-9


def test_not_offered_when_threads_hardly_wait_already_fit_or_there_is_a_gpu():
    assert training_threads.build(contended(training_cpu_wait=0.05), CONTENDED) is None
    assert training_threads.build(contended(loader=dict(LOADER, num_workers=2, torch_threads=1)), CONTENDED) is None
    assert training_threads.build(contended(gpu=True), CONTENDED) is None


def test_the_keep_line_names_the_call_and_the_loader():
    line = training_threads.FIX.keep({"torch_threads": 1}, "train.py:42")
    assert "torch.set_num_threads(1)" in line and "train.py:42" in line and "OMP_NUM_THREADS=1" in line


def test_cpu_taken_by_other_programs_reaches_every_held_up_moment_at_most():
    """A loaded machine: the training received 0.1 cores and waited 85% of the time it wanted one.
    The central figure is its compute with every wait gone; the high end, every moment one of its
    two threads was held up gone (1 - 0.85)^2."""
    built = training_threads.build(contended(training_cores=0.1, training_cpu_wait=0.85), CONTENDED)
    assert abs(built["estimate_low"] - 1 / (0.11 + 0.89 * 0.15)) < 1e-9
    assert abs(built["estimate_high"] - 1 / (0.11 + 0.89 * 0.15 ** 2)) < 1e-9


def single_process(**fields):
    """A per-sample Python loop without workers (batches made in the training thread), two intra-op
    threads on two cores while other programs hold 1.2 of them: its threads waited 75% of the time."""
    base = dict(loader=dict(LOADER, num_workers=0, torch_threads=None), wait_source="dataloader", wait_share=0.4,
                cpu_count=2, producer_cores=0.3, training_cpu_wait=0.75, training_cores=0.5, other_cores=1.2,
                cores_busy=0.6, cores_free=1.4, machine_idle=0.1, model={"torch_threads": 2})
    base.update(fields)
    return evidence(**base)


def test_a_single_process_loop_whose_threads_wait_is_offered_the_thread_setting_whatever_the_verdict():
    for verdict in (situation("compute", 0.6), situation("input.cpu", 0.4)):
        built = training_threads.build(single_process(), verdict)
        assert built["change"] == {"torch_threads": 1}
        assert "OMP_NUM_THREADS=1" in built["detail"] and "other programs holding 1.2 cores" in built["detail"]
        # The whole step runs in the training process: its part is the step.
        assert abs(built["estimate_low"] - 1 / 0.5) < 1e-9
        # The measured 13x of such a program lies inside the range (1 - 0.75)^2 of the step left.
        assert built["estimate_low"] <= 13 <= built["estimate_high"] == 1 / 0.25 ** 2


def test_threads_that_fit_the_cores_left_get_nothing():
    assert training_threads.build(single_process(other_cores=None, model={"torch_threads": 1}),
                                  situation("compute", 0.6)) is None
    # Two threads on four idle cores queue for nothing the fix can give.
    assert training_threads.build(single_process(other_cores=None, cpu_count=4), situation("compute", 0.6)) is None


def test_the_thread_count_a_program_without_a_loader_set_is_read_from_the_model_probe():
    ev = single_process(loader=None, wait_source="sampled", model={"torch_threads": 1})
    assert ev.intra_op_threads == 1
    assert single_process(loader=None, wait_source="sampled", model=None).intra_op_threads == 2


def test_a_user_naming_the_fix_gets_the_threads_that_fit_the_cores_left():
    report = {"steps": {"count": 60, "measured": 50, "window_s": 10.0, "data_wait_share": 0.03,
                        "data_wait_source": "before-first-forward",
                        "training_cpu": {"run_s": 9.0, "wait_s": 1.0, "wait_share": 0.1}},
              "system": {"cpu_count": 4, "others": {"notable": True, "other_cores": 1.5}},
              "model": {"torch_threads": 4}, "dataloaders": []}
    assert training_threads.FIX.unadvised(report) == {"torch_threads": 2}
    report["system"]["others"] = {}
    assert training_threads.FIX.unadvised(report) == {"torch_threads": 3}
    report["model"]["torch_threads"] = 1
    assert training_threads.FIX.unadvised(report) is None


def test_threads_that_run_more_cores_than_are_left_do_parallel_work_and_get_nothing():
    """examples/photo_decode.py on an idle machine: two threads ran 1.55 cores beside workers taking
    0.32 and waited 18%; one thread measured 1.09-1.20x slower. The low end is that slowdown."""
    ev = contended(training_cores=1.55, training_cpu_wait=0.18, producer_cores=0.32, wait_share=0.04)
    assert training_threads.build(ev, CONTENDED) is None
    assert training_threads.compute_after(ev, 1) > 1.0
