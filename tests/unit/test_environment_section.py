"""The environment section: env stepping's share of the training window from the gymnasium probe's
running sums, the collection and learning phases, and the report's line about it."""

import pytest

from gpuprof.judge.sections.environment import analyse_environment
from gpuprof.present.reporting.environment_note import environment_notes

ENV = {"k": "env", "pid": 7, "cls": "SyncVectorEnv", "vector": True, "vector_cls": "SyncVectorEnv", "num_envs": 4,
       "async": False, "spec": "CartPole-v1", "vector_entry_point": True, "where": "ppo.py:210"}


def sums(pid=7, rate=0.5, start=0.0, end=20.0, every=1.0, per_s=100):
    """Running sums as the probe writes them: `rate` seconds of env stepping per second."""
    out, t = [], start
    while t <= end + 1e-9:
        out.append({"k": "env_steps", "pid": pid, "t": t, "seconds": rate * (t - start),
                    "calls": int(per_s * (t - start))})
        t += every
    return out


def loop(start=2.0, end=12.0, median=0.004, measured=160, pid=7):
    return {"pid": pid, "window_start": start, "window_end": end, "median_step_s": median, "measured": measured}


def test_the_share_is_the_running_sums_rise_over_the_window_interpolated_between_points():
    env = analyse_environment([ENV], sums(rate=0.3, every=0.7), loop(start=2.0, end=12.0))["environment"]
    assert env["seconds"] == pytest.approx(3.0, abs=1e-6) and env["share"] == pytest.approx(0.3, abs=1e-4)
    assert env["calls"] == 1000 and env["per_call_s"] == pytest.approx(0.003, rel=1e-3)
    assert env["num_envs"] == 4 and env["where"] == "ppo.py:210"


def test_only_the_training_process_counts_not_async_workers_stepping_their_own_envs():
    worker = sums(pid=8, rate=0.9)
    env = analyse_environment([ENV], sums(rate=0.1) + worker, loop())["environment"]
    assert env["share"] == pytest.approx(0.1, abs=1e-4) and env["processes"] == 2


def test_no_environment_stepped_gives_no_section():
    assert analyse_environment([], [], loop()) == {}


def test_collection_and_learning_phases_from_the_step_times():
    # 160 update steps at a 4 ms median: 0.64 s learning in a 10 s window; the rest is the rollout.
    env = analyse_environment([ENV], sums(rate=0.115), loop())["environment"]
    phases = env["phases"]
    assert phases["learning"]["share"] == pytest.approx(0.064, abs=1e-4)
    assert phases["collection"]["share"] == pytest.approx(0.936, abs=1e-4)
    assert phases["rollout"]["env_share"] == pytest.approx(0.115 / 0.936, abs=1e-3)


def test_no_phases_where_the_env_steps_inside_every_update():
    # DQN-like: one env step per optimizer step; the median step holds the env's time.
    env = analyse_environment([ENV], sums(rate=0.6), loop(median=0.0095, measured=1000))["environment"]
    assert "phases" not in env


def test_the_report_line_gives_the_share_its_bound_and_the_phases():
    env = analyse_environment([ENV], sums(rate=0.115), loop())["environment"]
    [line] = environment_notes(env)
    assert "SyncVectorEnv of 4 CartPole-v1 at ppo.py:210" in line and "took 11.5% of the training time" in line
    assert "made free: about 1.13x by its own time" in line and "collection (the rollout) 94%" in line
    assert environment_notes(None) == [] and environment_notes(dict(env, share=None)) == []


SB3_ENV = dict(ENV, cls="VecTransposeImage", vector_cls="DummyVecEnv", spec=None, vector_entry_point=False,
               library="stable-baselines3", wrappers=["VecTransposeImage"], sub_env="DrawnBalls",
               sub_wrappers=["Downsize", "Monitor"], algorithm="PPO", n_steps=64, made_with="make_vec_env",
               maker="DrawnBalls", maker_is_id=False, n_envs=4, wrapper_class="Downsize", make_where="train.py:40")


def test_an_sb3_vector_env_is_described_in_its_terms_per_vector_step_and_per_env():
    env = analyse_environment([SB3_ENV], sums(rate=0.75, per_s=180), loop())["environment"]
    assert env["library"] == "stable-baselines3" and env["vector_cls"] == "DummyVecEnv" and env["num_envs"] == 4
    assert env["maker"] == "DrawnBalls" and env["make_where"] == "train.py:40" and env["algorithm"] == "PPO"
    assert env["per_call_s"] == pytest.approx(0.75 / 180, rel=1e-3)
    assert env["per_env_step_s"] == pytest.approx(env["per_call_s"] / 4, rel=1e-3)
    line = environment_notes(env)[0]
    assert line.startswith("environment stepping (DummyVecEnv of 4 DrawnBalls (stable-baselines3; under "
                           "VecTransposeImage) at ppo.py:210) took 75.0%")
    assert "ms a step call (" in line and "ms per env)" in line


def test_a_loop_of_the_programs_own_counts_vector_steps_not_sub_env_steps():
    fan_out = dict(ENV, cls="Envs", vector_cls="Envs", library=None, fan_out=True, sub_env="Walker")
    env = analyse_environment([fan_out], sums(rate=0.4, per_s=400), loop())["environment"]
    assert env["calls"] == 1000 and env["library"] is None and env["fan_out"] is True    # 4000 sub-env steps
    assert env["per_call_s"] == pytest.approx(4.0 / 1000, rel=1e-3)


def test_a_run_recorded_before_libraries_were_named_is_gymnasiums():
    old = {key: value for key, value in ENV.items() if key != "library"}
    assert analyse_environment([old], sums(rate=0.3), loop())["environment"]["library"] == "gymnasium"
