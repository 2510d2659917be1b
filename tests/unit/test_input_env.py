"""The environment kind (input.env): the verdict only where env stepping is the largest part of the
time, its share a finding beside another verdict."""

import pytest

from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.classify import classify
from tests.unit.test_environment_section import ENV
from tests.unit.test_verdict_and_advice import sections


def judged(share, learning=None):
    phases = None
    if learning is not None:
        collection = 1 - learning
        phases = {"collection": {"share": collection}, "learning": {"share": learning},
                  "rollout": {"env_share": share / collection, "other_share": 1 - share / collection}}
    env = dict(ENV, share=share, seconds=share * 12, calls=3000, per_call_s=share * 12 / 3000,
               **({"phases": phases} if phases else {}))
    return classify(dict(sections(wait=0.01, source="before-first-forward"), environment=env))


def test_env_stepping_that_is_the_largest_part_is_the_verdict():
    result = judged(0.62, learning=0.1)
    verdict = result["verdict"]
    assert verdict["bottleneck"] == bottlenecks.INPUT_ENV.id and verdict["share"] == pytest.approx(0.62)
    assert verdict["summary"].startswith("Input-bound (environment): environment steps (SyncVectorEnv of 4 at "
                                         "ppo.py:210) take 62% of the training time")


def test_a_small_env_share_is_reported_as_a_finding_not_the_verdict():
    # A CleanRL-style CartPole PPO: env stepping 11.5%, the rest of the rollout policy inference.
    result = judged(0.115, learning=0.35)
    assert result["verdict"]["bottleneck"] == bottlenecks.COMPUTE.id
    env = [f for f in result["findings"] if f["bottleneck"] == bottlenecks.INPUT_ENV.id]
    assert env and env[0]["share"] == pytest.approx(0.115)


def test_env_past_the_bound_but_smaller_than_another_part_is_not_the_verdict():
    assert judged(0.35, learning=0.5)["verdict"]["bottleneck"] == bottlenecks.COMPUTE.id
    assert judged(0.4)["verdict"]["bottleneck"] == bottlenecks.COMPUTE.id      # the other 60% as one part
    assert judged(0.55)["verdict"]["bottleneck"] == bottlenecks.INPUT_ENV.id
