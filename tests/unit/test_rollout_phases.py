"""Collection and learning as measured phases (reinforcement learning): the rollout probe's phases
clipped to the window and split into env stepping, policy inference, host conversions and the rest;
the advice for the largest part; the rollout's slow steps and eval-mode collection explained."""

import pytest

from gpuprof.advise.rank import advise
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.sections.environment import analyse_environment
from gpuprof.judge.sections.eval_phases import outside_rollouts
from gpuprof.judge.sections.rollout import measured_phases
from gpuprof.judge.sections.spikes import describe
from gpuprof.present.reporting.environment_note import environment_notes
from tests.unit.test_environment_section import ENV, loop, sums
from tests.unit.test_verdict_and_advice import sections


def rollout(t0, seconds=0.6, env_s=0.1, inf_s=0.15, sampled_us=60_000, conv_us=10_000, dist_us=10_000, pid=7,
            env_us=10_000, fwd_us=15_000):
    """One collection phase as the probe writes it (every 1 s in these tests: 0.6 s collecting); of
    its samples, 35 ms stood outside env steps and module calls."""
    return {"k": "rollout", "pid": pid, "t0": t0, "t": t0 + seconds, "first": t0 + 0.001, "last": t0 + seconds - 0.01,
            "env_calls": 128, "env_s": env_s, "inf_calls": 257, "inf_s": inf_s, "sampled_us": sampled_us,
            "env_us": env_us, "fwd_us": fwd_us, "conv_us": conv_us, "dist_us": dist_us}


def test_phases_are_the_probes_collection_spans_clipped_to_the_window_with_their_parts():
    events = [rollout(float(t)) for t in range(0, 10)]          # window 2..12: rollouts 2..9 whole
    phases = measured_phases(events, 7, 2.0, 12.0, 10.0)
    assert phases["count"] == 8 and phases["collection"]["share"] == pytest.approx(0.48)
    assert phases["learning"]["share"] == pytest.approx(0.52)
    parts = phases["parts"]
    assert parts["env"] == pytest.approx(0.08) and parts["conversions"] == pytest.approx(0.08)
    # The untimed 0.35 s of each rollout split by the 35 ms of samples outside env steps and forwards:
    # 10 ms drawing actions (policy inference, beside the forwards' timed 0.15 s), 10 ms converting.
    assert parts["inference"] == pytest.approx((0.15 + 0.1) * 8 / 10) and parts["rest"] == pytest.approx(0.12)
    assert sum(parts.values()) == pytest.approx(0.48)
    assert phases["largest"] == "inference" and phases["inference_per_call_s"] == pytest.approx(0.15 / 257, rel=1e-3)


def test_a_phase_across_the_windows_edge_counts_for_its_part_inside():
    phases = measured_phases([rollout(1.7, seconds=0.6)], 7, 2.0, 12.0, 10.0)
    assert phases["collection"]["seconds"] == pytest.approx(0.3)
    assert phases["parts"]["env"] == pytest.approx(0.1 * 0.5 / 10)


def test_without_samples_conversions_are_not_measured_and_other_processes_do_not_count():
    events = [rollout(float(t), sampled_us=0, conv_us=0, dist_us=0, env_us=0, fwd_us=0) for t in range(2, 10)]
    events.append(rollout(3.0, pid=8))
    phases = measured_phases(events, 7, 2.0, 12.0, 10.0)
    assert phases["parts"]["conversions"] is None and phases["count"] == 8
    note = environment_notes(dict(ENV, share=0.08, per_call_s=0.0002, phases=phases))[1]
    assert "host conversions not measured (no stack samples)" in note
    assert measured_phases([], 7, 2.0, 12.0, 10.0) is None


def test_the_environment_section_prefers_measured_phases_to_the_step_time_estimate():
    env = analyse_environment([ENV], sums(rate=0.08), loop(), [rollout(float(t)) for t in range(0, 12)])
    phases = env["environment"]["phases"]
    assert phases["basis"].startswith("measured") and phases["count"] == 10
    estimated = analyse_environment([ENV], sums(rate=0.08), loop())["environment"]["phases"]
    assert estimated["basis"].startswith("step times") and "parts" not in estimated


def test_the_note_names_each_part_and_the_largest():
    phases = measured_phases([rollout(float(t)) for t in range(0, 12)], 7, 2.0, 12.0, 10.0)
    lines = environment_notes(dict(ENV, share=0.1, per_call_s=0.0002, phases=phases))
    assert len(lines) == 2 and lines[1].startswith("collection (the rollout) 60% and learning (the update) 40% "
                                                   "of the training time, measured over 10 rollouts: env stepping 10%")
    assert lines[1].endswith("the largest part of the rollout is policy inference")


def judged(env_s, inf_s, conv_us, learning_heavy=False):
    """A compute-judged run whose environment section holds measured phases."""
    seconds = 0.3 if learning_heavy else 0.6
    events = [rollout(float(t), seconds=seconds, env_s=env_s, inf_s=inf_s, conv_us=conv_us, dist_us=0)
              for t in range(0, 12)]
    phases = measured_phases(events, 7, 2.0, 12.0, 10.0)
    share = phases["parts"]["env"]
    env = dict(ENV, share=share, seconds=share * 10, calls=1280, per_call_s=share * 10 / 1280, phases=phases)
    data = dict(sections(wait=0.01, source="before-first-forward"), environment=env,
                model={"class": "Agent", "where": "ppo.py:40", "params": 9155, "dtypes": {"float32": 9155}})
    result = classify(data)
    return result, advise(result["evidence"], result["verdict"], result["findings"])


def test_policy_inference_largest_leads_with_the_rollout_fix_before_operator_level_ones():
    result, advice = judged(env_s=0.07, inf_s=0.3, conv_us=6_000)
    assert result["verdict"]["bottleneck"] == bottlenecks.COMPUTE.id
    ids = [a["id"] for a in advice]
    assert ids[0] == "rollout-inference" and advice[0]["ranked_by"].startswith("first: the rollout is 60%")
    assert "compile" in ids and ids.index("compile") > 0
    assert "async-vector-env" not in ids and "vectorised-env" not in ids
    inference = result["evidence"].env["phases"]["parts"]["inference"]
    assert advice[0]["estimate"]["high"] <= 1 / (1 - inference) + 0.01
    envs = next(a for a in advice if a["id"] == "more-envs-per-call")
    assert envs["estimate"]["low"] > 1.0 and "the advantages then see half as many steps ahead" in envs["why"]


def test_conversions_largest_lead_with_preallocated_buffers():
    _, advice = judged(env_s=0.07, inf_s=0.05, conv_us=30_000)
    assert advice[0]["id"] == "rollout-buffers" and "torch.from_numpy" in advice[0]["snippet"]


def test_env_stepping_largest_is_the_environment_verdict_even_below_the_wait_bound():
    result, advice = judged(env_s=0.25, inf_s=0.1, conv_us=15_000)
    assert result["evidence"].env["phases"]["largest"] == "env"
    assert result["verdict"]["bottleneck"] == bottlenecks.INPUT_ENV.id and result["verdict"]["share"] < 0.3
    ids = [a["id"] for a in advice]
    assert ids[0] == "vectorised-env" and "rollout-inference" not in ids


def test_an_update_that_is_most_of_the_time_keeps_the_operator_level_fixes_first():
    _, advice = judged(env_s=0.03, inf_s=0.12, conv_us=3_000, learning_heavy=True)
    assert advice[0]["id"] != "rollout-inference" and "rollout-inference" not in [a["id"] for a in advice]


def test_an_eval_mode_phase_that_stepped_the_environment_is_collection_not_evaluation():
    rollouts = [rollout(2.0), rollout(4.0)]
    collecting = {"k": "eval_phase", "pid": 7, "t0": 1.999, "t": 2.6}
    evaluating = {"k": "eval_phase", "pid": 7, "t0": 3.0, "t": 3.5}
    other_process = {"k": "eval_phase", "pid": 9, "t0": 4.0, "t": 4.5}
    assert outside_rollouts([collecting, evaluating, other_process], rollouts) == [evaluating, other_process]
    assert outside_rollouts([collecting], []) == [collecting]


def test_periodic_slow_steps_that_are_the_rollouts_are_named_as_such():
    phases = measured_phases([rollout(float(t)) for t in range(0, 12)], 7, 2.0, 12.0, 10.0)
    spikes = {"every": 16, "count": 10, "typical_s": 0.62, "median_s": 0.002, "share": 0.6, "where": "act (ppo.py:39)"}
    assert "each is a rollout" in describe(spikes, phases)
    assert "act (ppo.py:39) runs in them" in describe(spikes)
    assert "rollout" not in describe(dict(spikes, count=3, typical_s=0.05), phases)
