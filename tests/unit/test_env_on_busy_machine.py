"""Env stepping on a busy machine: another process holding a core stretches the policy's multi-
threaded calls far more than the single-threaded env steps; each part at the pace of its fastest
calls keeps the env the verdict where it is the job's largest part, and the rollout's fixes read
the same parts. Stable-Baselines3's own collect_rollouts gets no rollout-inference snippet."""

import math

import pytest

from gpuprof.advise.rank import advise
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.sections.rollout import BUCKETS_PER_OCTAVE, measured_phases, pace_of
from tests.unit.test_environment_section import ENV
from tests.unit.test_verdict_and_advice import sections

SB3 = dict(ENV, cls="VecTransposeImage", vector_cls="DummyVecEnv", spec=None, vector_entry_point=False,
           library="stable-baselines3", algorithm="PPO", n_steps=64, made_with="make_vec_env", maker="Renderer",
           maker_is_id=False, n_envs=4, make_where="train.py:40")


def bucket(seconds: float) -> int:
    return math.floor(math.log2(seconds) * BUCKETS_PER_OCTAVE)


def histogram(*calls) -> list:
    """[[bucket, count], ...] of (seconds, count) pairs, as the rollout probe writes it."""
    counts = {}
    for seconds, count in calls:
        counts[bucket(seconds)] = counts.get(bucket(seconds), 0) + count
    return sorted(counts.items())


def rollout(t0, env_calls, inf_calls, rest_s=0.02):
    """A collection phase: `env_calls` and `inf_calls` as (seconds, count) pairs, and `rest_s` of the rest."""
    env_s, inf_s = sum(s * n for s, n in env_calls), sum(s * n for s, n in inf_calls)
    seconds = env_s + inf_s + rest_s
    return {"k": "rollout", "pid": 7, "t0": t0, "t": t0 + seconds, "first": t0, "last": t0 + seconds,
            "env_calls": sum(n for _, n in env_calls), "env_s": env_s, "inf_calls": sum(n for _, n in inf_calls),
            "inf_s": inf_s, "sampled_us": 0, "env_us": 0, "fwd_us": 0, "conv_us": 0, "dist_us": 0,
            "env_hist": histogram(*env_calls), "inf_hist": histogram(*inf_calls)}


#: Quiet: 32 vector steps of 20 ms (env) and 32 policy calls of 2 ms, then a 0.276 s update.
QUIET = dict(env_calls=[(0.020, 32)], inf_calls=[(0.002, 32)], update_s=0.276)
#: Beside a process spinning on one of two cores: env steps 10% slower, most policy calls and the
#: update 8x (torch's two threads fight the spinner for a core).
BUSY = dict(env_calls=[(0.022, 32)], inf_calls=[(0.002, 4), (0.016, 28)], update_s=0.276 * 8)


def phases(kind):
    kind = dict(kind)
    update_s = kind.pop("update_s")
    first = rollout(0.0, **kind)
    period = first["t"] + update_s
    events = [rollout(k * period, **kind) for k in range(0, 14)]
    return measured_phases(events, 7, 2 * period, 12 * period, 10 * period), period


def test_the_pace_is_the_fastest_tenth_of_the_calls_over_their_mean():
    assert pace_of([histogram((0.001, 8), (0.008, 56))], (0.001 * 8 + 0.008 * 56) / 64) == \
        pytest.approx(0.001 / 0.007125, rel=0.1)
    assert pace_of([histogram((0.005, 64))], 0.005) == pytest.approx(1.0, abs=0.1)
    assert pace_of([histogram((0.005, 10))], 0.005) is None             # too few calls to tell
    assert pace_of([], 0.005) is None and pace_of([histogram((0.005, 64))], None) is None


def test_on_a_quiet_machine_the_uncontended_parts_are_about_the_measured_ones():
    quiet, _ = phases(QUIET)
    assert quiet["parts"]["env"] == pytest.approx(0.64 / 1.0, abs=0.01)
    assert quiet["uncontended"]["parts"]["env"] == pytest.approx(quiet["parts"]["env"], abs=0.05)


def judged(kind, others=None, env=SB3):
    measured, period = phases(kind)
    share = measured["parts"]["env"]
    window = 10 * period
    section = dict(env, share=share, seconds=share * window, calls=320, per_call_s=share * window / 320,
                   phases=measured)
    data = dict(sections(wait=0.01, source="before-first-forward"), environment=section,
                model={"class": "ActorCriticPolicy", "where": "train.py:52", "params": 9155,
                       "dtypes": {"float32": 9155}})
    if others is not None:
        data["system"]["others"] = {"other_cores": others, "cpu_count": 2, "share": others / 2, "notable": True}
    result = classify(data)
    return result, advise(result["evidence"], result["verdict"], result["findings"])


def test_beside_a_busy_process_the_env_is_still_the_verdict_at_each_parts_uncontended_pace():
    quiet, _ = judged(QUIET)
    assert quiet["verdict"]["bottleneck"] == bottlenecks.INPUT_ENV.id
    busy, advice = judged(BUSY, others=1.0)
    measured = busy["evidence"].env["phases"]
    measured_env = measured["parts"]["env"]
    assert measured_env < 0.25 < measured["learning"]["share"]     # as measured: the stretched update is larger
    verdict = busy["verdict"]
    assert verdict["bottleneck"] == bottlenecks.INPUT_ENV.id, verdict["summary"]
    assert abs(verdict["share"] - quiet["verdict"]["share"]) < 0.15
    assert verdict["evidence"]["env_share_measured"] == pytest.approx(measured_env, abs=1e-3)
    assert f"env stepping was {measured_env:.0%}" in verdict["summary"]
    assert "other processes holding 1.0 of 2 cores" in verdict["summary"]
    assert "rollout-inference" not in [a["id"] for a in advice]


def test_without_other_processes_the_measured_parts_decide():
    result, _ = judged(BUSY)
    assert result["verdict"]["bottleneck"] != bottlenecks.INPUT_ENV.id


def test_sb3s_own_collect_rollouts_gets_no_rollout_inference_snippet_a_loop_of_ones_own_does():
    heavy = dict(env_calls=[(0.0005, 64)], inf_calls=[(0.006, 64)], update_s=0.1)
    _, own = judged(heavy, env=ENV)
    assert own[0]["id"] == "rollout-inference" and "agent.actor" in own[0]["snippet"]
    _, sb3 = judged(heavy)
    assert not [a for a in sb3 if a["id"] in ("rollout-inference", "rollout-buffers")]
    assert not any("agent.actor" in (a["snippet"] or "") or "make_vec(" in (a["snippet"] or "") for a in sb3)


def test_a_malformed_histogram_is_no_pace_and_no_traceback():
    assert pace_of([[["a", 1]], "junk", None, [[1, 2, 3]]], 0.005) is None
