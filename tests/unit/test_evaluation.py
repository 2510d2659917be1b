"""Evaluation apart from training: loader roles, the evaluation's own input verdict and its share
(analysis.evaluation), on hand-built loop results and loader sections."""

import pytest

from gpuprof.judge.verdict.evaluation import role_of, with_evaluation
from gpuprof.judge.sections.loop import analyse_loop


def loader(where, dataset="Samples", workers=0, cpu=0.95, wait=1.0, batches=20):
    wall = 2.0
    return {"id": where, "where": where, "dataset": dataset, "num_workers": workers, "batches": batches,
            "wait_s": wait, "batch_size": 32,
            "producer": {"batches": batches, "wall_s": wall, "cpu_s": cpu * wall, "system_cpu_s": 0.0,
                         "read_bytes": 0, "read_chars": 0}}


def loop_with_evaluation(seconds=2.0, wait_s=1.8):
    return {"count": 41, "measured": 40, "window_s": 10.0, "data_wait_share": 0.01,
            "evaluation": {"passes": 8, "seconds": seconds, "share": seconds / 10.0, "wait_s": wait_s,
                           "training_loader": "train.py:10", "loaders": ["train.py:11"]}}


def test_the_training_and_validation_loaders_get_their_roles_and_lines():
    steps, loaders = with_evaluation(loop_with_evaluation(), [loader("train.py:10"), loader("train.py:11")], 20.0)
    assert [(e["role"], e["where"]) for e in loaders] == [("train", "train.py:10"), ("validation", "train.py:11")]
    evaluation = steps["evaluation"]
    assert evaluation["wall_share"] == pytest.approx(0.1)
    assert evaluation["loaders"] == [{"role": "validation", "where": "train.py:11", "batches": 20, "wait_s": 1.0}]


def test_the_dataset_name_says_test_and_a_loader_outside_the_passes_is_evaluation():
    assert role_of({"where": "a.py:3", "dataset": "CifarTestSet"}, "a.py:1", {"a.py:3"}) == "test"
    assert role_of({"where": "a.py:3", "dataset": "val_split"}, "a.py:1", set()) == "validation"
    assert role_of({"where": "a.py:3", "dataset": "Interval"}, "a.py:1", set()) == "evaluation"
    assert role_of({"where": "a.py:1", "dataset": "TestSet"}, "a.py:1", set()) == "train"


def test_a_slow_cpu_bound_validation_loader_gets_its_own_input_verdict():
    steps, _ = with_evaluation(loop_with_evaluation(), [loader("train.py:10"), loader("train.py:11", cpu=0.95)], 20.0)
    own = steps["evaluation"]["input"]
    assert own["wait_share"] == pytest.approx(0.9)
    assert own["bottleneck"] == "input.cpu" and own["where"] == "train.py:11" and own["num_workers"] == 0
    assert "90% of its time waits on the DataLoader at train.py:11" in own["summary"]


def test_an_evaluation_that_keeps_up_says_so():
    steps, _ = with_evaluation(loop_with_evaluation(wait_s=0.1), [loader("train.py:10"), loader("train.py:11")], 20.0)
    own = steps["evaluation"]["input"]
    assert own["bottleneck"] is None and own["summary"].startswith("keeps up: it waits 5% of its time")


def test_a_run_with_one_loader_and_no_evaluation_is_unchanged():
    steps = {"count": 10, "measured": 9}
    loaders = [loader("train.py:10")]
    assert with_evaluation(steps, loaders, 5.0) == (steps, loaders)


def test_the_loop_names_the_training_loader_and_the_evaluating_ones():
    """Steps every 100 ms on the training loader; one pass of 4 validation batches in the middle."""
    train = [{"k": "batch", "pid": 1, "l": 1, "t": 0.1 * i, "w": 0.001} for i in range(1, 21)]
    val = [{"k": "batch", "pid": 1, "l": 2, "t": 1.05 + 0.01 * i, "w": 0.009} for i in range(4)]
    steps = [{"k": "step", "pid": 1, "t": 0.1 * i + 0.05} for i in range(1, 21)]
    result = analyse_loop(steps, train + val, [{"l": 1, "where": "t.py:5"}, {"l": 2, "where": "t.py:6"}])
    evaluation = result["evaluation"]
    assert evaluation["training_loader"] == "t.py:5" and evaluation["loaders"] == ["t.py:6"]


def test_eval_mode_phases_without_a_loader_are_evaluation_and_their_steps_no_data_wait():
    """Twenty 100 ms steps that each spend 10 ms before their first forward; after the tenth, the model
    spends 1 s in eval mode (and that step 200 ms more before its forward)."""
    steps, t = [], 0.0
    for i in range(20):
        gap = 0.01
        if i == 10:
            phase = {"k": "eval_phase", "pid": 1, "t0": t + 0.001, "t": t + 1.001}
            t, gap = t + 1.0, 0.2
        t += 0.1
        steps.append({"k": "step", "pid": 1, "t": t, "f": gap, "fc": gap, "b": 0.02})
    plain = analyse_loop(steps, [], [])
    result = analyse_loop(steps, [], [], eval_phases=[phase])
    evaluation = result["evaluation"]
    assert evaluation["passes"] == 1 and evaluation["seconds"] == pytest.approx(1.0)
    # The step that held the evaluation is no training step: its 200 ms before the forward is not data wait.
    assert result["data_wait_s"] == pytest.approx(18 * 0.01)
    assert result["data_wait_share"] == pytest.approx(18 * 0.01 / (plain["window_s"] - 1.0))
    assert plain["data_wait_s"] == pytest.approx(18 * 0.01 + 0.2) and "evaluation" not in plain


def test_a_validation_pass_under_model_eval_is_one_pass_not_two():
    train = [{"k": "batch", "pid": 1, "l": 1, "t": 0.1 * i, "w": 0.001} for i in range(1, 21)]
    val = [{"k": "batch", "pid": 1, "l": 2, "t": 1.05 + 0.01 * i, "w": 0.009} for i in range(4)]
    steps = [{"k": "step", "pid": 1, "t": 0.1 * i + 0.05} for i in range(1, 21)]
    phase = {"pid": 1, "t0": 1.03, "t": 1.095}
    loaders = [{"l": 1, "where": "t.py:5"}, {"l": 2, "where": "t.py:6"}]
    alone = analyse_loop(steps, train + val, loaders)["evaluation"]
    both = analyse_loop(steps, train + val, loaders, eval_phases=[phase])["evaluation"]
    assert alone["passes"] == both["passes"] == 1
    # The pass over the loader (1.041 to 1.099) joined with the eval-mode phase (1.03 to 1.095).
    assert alone["seconds"] == pytest.approx(0.058, abs=1e-4) and both["seconds"] == pytest.approx(0.069, abs=1e-4)


def test_batches_taken_in_eval_mode_are_evaluation_even_from_the_training_loaders_line():
    """A Trainer builds both loaders at the user's one line: the evaluation's batches come from that
    line too, and only model.eval() tells them apart."""
    train = [{"k": "batch", "pid": 1, "l": 1, "t": 0.1 * i, "w": 0.001} for i in range(1, 21)]
    val = [{"k": "batch", "pid": 1, "l": 2, "t": 1.05 + 0.01 * i, "w": 0.009} for i in range(4)]
    steps = [{"k": "step", "pid": 1, "t": 0.1 * i + 0.05} for i in range(1, 21)]
    loaders = [{"l": 1, "where": "t.py:5"}, {"l": 2, "where": "t.py:5"}]
    counted = analyse_loop(steps, train + val, loaders)
    apart = analyse_loop(steps, train + val, loaders, eval_phases=[{"pid": 1, "t0": 1.035, "t": 1.095}])
    assert "evaluation" not in counted and counted["data_wait_s"] == pytest.approx(19 * 0.001 + 4 * 0.009)
    assert apart["data_wait_s"] == pytest.approx(19 * 0.001)
    assert apart["evaluation"]["passes"] == 1 and apart["evaluation"]["wait_s"] == pytest.approx(0.036)
