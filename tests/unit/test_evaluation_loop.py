"""The evaluation.loop bottleneck: reported beside the step verdict, never as it, and its fix offered
whatever the training verdict is."""

from gpuprof.advise.rank import advise
from gpuprof.judge.verdict.classify import classify
from tests.unit.test_verdict_and_advice import sections


def with_evaluation(data, share=0.25, input_bottleneck="input.cpu"):
    steps = dict(data["steps"], evaluation={
        "passes": 8, "seconds": 3.0, "share": share, "wait_s": 2.7, "wall_share": 0.2,
        "loaders": [{"role": "validation", "where": "train.py:50", "batches": 24, "wait_s": 2.7}],
        "input": {"wait_share": 0.9, "bottleneck": input_bottleneck, "where": "train.py:50", "num_workers": 0,
                  "summary": "Input-bound: 90% of its time waits on the DataLoader at train.py:50"}})
    return dict(data, steps=steps)


def test_a_training_loop_that_keeps_up_stays_compute_bound_with_the_evaluation_beside_it():
    result = classify(with_evaluation(sections(wait=0.01, cpu=0.2)))
    assert result["verdict"]["bottleneck"] == "compute"
    beside = [f for f in result["findings"] if f["bottleneck"] == "evaluation.loop"]
    assert len(beside) == 1 and beside[0]["share"] == 0.25
    assert beside[0]["evidence"]["share_of"] == "the training loop's time"
    assert "validation loader at train.py:50" in beside[0]["reason"]
    assert "the evaluation itself: Input-bound: 90% of its time" in beside[0]["reason"]
    fixes = [a["id"] for a in advise(result["evidence"], result["verdict"], result["findings"])]
    assert "eval-loader-workers" in fixes


def test_an_input_bound_training_loop_keeps_its_verdict_even_when_evaluation_is_larger():
    result = classify(with_evaluation(sections(wait=0.4), share=0.6))
    assert result["verdict"]["bottleneck"] == "input.cpu" and result["verdict"]["share"] == 0.4
    assert any(f["bottleneck"] == "evaluation.loop" for f in result["findings"])


def test_a_short_evaluation_is_no_finding():
    result = classify(with_evaluation(sections(wait=0.01, cpu=0.2), share=0.05))
    assert all(f["bottleneck"] != "evaluation.loop" for f in result["findings"])
    assert "eval-loader-workers" not in [a["id"] for a in advise(result["evidence"], result["verdict"],
                                                                 result["findings"])]
