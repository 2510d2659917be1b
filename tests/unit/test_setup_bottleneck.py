"""The `setup` bottleneck: a notable start-up, and workers started again every epoch, are findings
that stand beside the step verdict and never replace it."""

import pytest

from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.sections.startup import analyse_startup
from tests.unit.test_startup import COUNTS, startup_event
from tests.unit.test_verdict_and_advice import sections


def with_startup(base: dict, seconds=10.0, share=0.5):
    section = analyse_startup([startup_event(COUNTS, t=100.0 + seconds)],
                              {"start_monotonic": 100.0, "duration_s": seconds / share, "pid": 7})
    return dict(base, startup=section)


def test_setup_stands_beside_the_step_verdict_and_never_replaces_it():
    for base in (sections(wait=0.8, cpu=0.95), sections(wait=0.02)):
        plain = classify(base)
        judged = classify(with_startup(base))
        assert judged["verdict"] == plain["verdict"]
        found = [f for f in judged["findings"] if f["bottleneck"] == bottlenecks.SETUP.id]
        assert len(found) == 1 and found[0]["share"] == pytest.approx(0.5)
        assert "build_dataset at train.py:17" in found[0]["reason"]
        assert found[0]["evidence"]["share_of"] == "the run's wall time"


def test_a_start_up_that_is_not_notable_is_no_finding():
    judged = classify(with_startup(sections(wait=0.02), seconds=3.0, share=0.5))
    assert not [f for f in judged["findings"] if f["bottleneck"] == bottlenecks.SETUP.id]


def restarting(epochs=4, wait=8.0, persistent=False, context="spawn", window=20.0):
    base = sections(wait=0.02, workers=2)
    loader = dict(base["dataloaders"][0], epochs=epochs, epoch_start_wait_s=wait, persistent_workers=persistent,
                  context=context)
    return dict(base, dataloaders=[loader], steps=dict(base["steps"], window_s=window))


def test_workers_started_again_every_epoch_are_a_setup_finding_beside_the_verdict():
    judged = classify(restarting())
    assert judged["verdict"]["bottleneck"] == classify(sections(wait=0.02, workers=2))["verdict"]["bottleneck"]
    found = [f for f in judged["findings"] if f["bottleneck"] == bottlenecks.SETUP.id]
    assert len(found) == 1
    # 8 s over 4 epochs: 2 s a start, paid again by the 3 later epochs: 6 s of a 20 s window.
    assert found[0]["share"] == pytest.approx(0.3) and found[0]["evidence"]["lost_s"] == pytest.approx(6.0)
    assert "import the main script again" in found[0]["reason"]
    assert "import the main script" not in [f for f in classify(restarting(context=None))["findings"]
                                             if f["bottleneck"] == bottlenecks.SETUP.id][0]["reason"]


def test_persistent_or_single_epoch_or_cheap_starts_are_no_finding():
    for data in (restarting(persistent=True), restarting(epochs=1), restarting(wait=1.0),
                 restarting(wait=1.2, window=100.0)):
        assert not [f for f in classify(data)["findings"] if f["bottleneck"] == bottlenecks.SETUP.id]
