from gpuprof.advise.fixes import eval_loader_workers
from tests.unit.fixes.cases import evidence, situation as any_situation

BESIDE = ({"bottleneck": "evaluation.loop", "share": 0.22},)


def situation(bottleneck="compute", share=0.99, findings=BESIDE):
    return any_situation(bottleneck, share, findings)


def evaluating(wait_s=2.0, bottleneck="input.cpu", num_workers=0, **fields):
    own = {"wait_share": 0.9, "bottleneck": bottleneck, "where": "train.py:50", "num_workers": num_workers}
    return evidence(evaluation={"passes": 8, "seconds": 2.2, "share": 0.22, "wait_s": wait_s, "input": own},
                    **fields)


def test_a_cpu_bound_evaluation_loader_in_the_training_process_gets_workers_at_its_own_line():
    built = eval_loader_workers.build(evaluating(), situation("compute", 0.99))
    # 4 workers on 4 cores: at most 3/4 of the 2 s wait goes, out of the 10 s loop.
    assert abs(built["estimated_speedup"] - 10.0 / (10.0 - 2.0 * 3 / 4)) < 1e-9
    assert built["where"] == "train.py:50" and "num_workers=4, persistent_workers=True" in built["snippet"]
    assert "20% of the training loop's time" in built["why"]


def test_workers_are_capped_by_the_cores():
    built = eval_loader_workers.build(evaluating(cpu_count=2), situation("compute", 0.99))
    assert abs(built["estimated_speedup"] - 10.0 / (10.0 - 2.0 / 2)) < 1e-9


def test_no_fix_for_an_evaluation_that_keeps_up_waits_on_disk_has_workers_or_runs_on_one_core():
    assert eval_loader_workers.build(evaluating(bottleneck=None), situation("compute", 0.99)) is None
    assert eval_loader_workers.build(evaluating(bottleneck="input.disk"), situation("compute", 0.99)) is None
    assert eval_loader_workers.build(evaluating(num_workers=2), situation("compute", 0.99)) is None
    assert eval_loader_workers.build(evaluating(cpu_count=1), situation("compute", 0.99)) is None
    assert eval_loader_workers.build(evidence(), situation()) is None
    assert eval_loader_workers.build(evaluating(), situation(findings=())) is None
