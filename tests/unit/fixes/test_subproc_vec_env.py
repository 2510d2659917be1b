"""subproc-vec-env: Stable-Baselines3's own remedy for a costly env, in SB3's terms: the program's
make_vec_env call given back with vec_env_cls=SubprocVecEnv, estimated on the cores the job has."""

import pytest

from gpuprof.advise.fixes import subproc_vec_env, vectorised_env
from gpuprof.advise.rank import advise
from tests.unit.fixes.cases import situation, up_to
from tests.unit.fixes.env_cases import env_evidence, env_verdict, sb3_evidence

MESSAGES = subproc_vec_env.MESSAGE_S


def after(share, parallel, n=4, per_call=0.005):
    return share * (1 / parallel + n * MESSAGES / per_call)


def test_the_programs_make_vec_env_call_with_subproc_vec_env_on_the_cores_the_job_has():
    ev = sb3_evidence(0.75)
    ev.cpu_count = 2
    built = subproc_vec_env.build(ev, env_verdict(0.75))
    # 4 envs 2 at a time on 2 cores, each 5 ms vector step adding 4 x 110 µs of messages.
    assert built["estimated_speedup"] == pytest.approx(1 / (1 - 0.75 + after(0.75, 2)))
    assert built["snippet"].splitlines()[:2] == [
        "from stable_baselines3.common.vec_env import SubprocVecEnv",
        "envs = make_vec_env(Renderer, n_envs=4, wrapper_class=Downsize, vec_env_cls=SubprocVecEnv)   # your other "
        "arguments as at train.py:40"]
    assert "(VecTransposeImage) stay as they are" in built["snippet"]
    assert built["where"] == "train.py:40" and up_to(built) in built["why"] and "2 at a time on 2 cores" in built["why"]
    assert built["first"].startswith("first: one argument")
    assert "make_vec(" not in built["snippet"] and "gymnasium" not in built["snippet"]


def test_an_env_id_is_given_back_quoted_and_a_vector_env_built_by_hand_is_replaced_in_place():
    made = subproc_vec_env.build(sb3_evidence(maker="CartPole-v1", maker_is_id=True, wrapper_class=None),
                                 env_verdict())
    assert "make_vec_env('CartPole-v1', n_envs=4, vec_env_cls=SubprocVecEnv)" in made["snippet"]
    by_hand = subproc_vec_env.build(sb3_evidence(made_with=None, make_where=None), env_verdict())
    assert "envs = SubprocVecEnv([make_env(i) for i in range(4)])   # in place of DummyVecEnv([...])" in \
        by_hand["snippet"]
    assert by_hand["where"] == "train.py:52"


def test_other_processes_cores_are_not_the_jobs_and_may_leave_nothing_to_gain():
    ev = sb3_evidence(0.75)
    ev.cpu_count, ev.other_cores = 4, 1.5
    built = subproc_vec_env.build(ev, env_verdict(0.75))
    assert built["estimated_speedup"] == pytest.approx(1 / (1 - 0.75 + after(0.75, 2.5)))
    busy = sb3_evidence(0.75)
    busy.cpu_count, busy.other_cores = 2, 1.0           # one core left: the envs would step one at a time
    assert subproc_vec_env.build(busy, env_verdict(0.75)) is None


def test_not_offered_for_gymnasium_in_processes_already_cheap_steps_one_env_or_no_env_bottleneck():
    assert subproc_vec_env.build(env_evidence(0.6), env_verdict()) is None
    assert subproc_vec_env.build(sb3_evidence(vector_cls="SubprocVecEnv", **{"async": True}), env_verdict()) is None
    assert subproc_vec_env.build(sb3_evidence(per_call_s=4 * 20e-6), env_verdict()) is None
    assert subproc_vec_env.build(sb3_evidence(num_envs=1), env_verdict()) is None
    assert subproc_vec_env.build(sb3_evidence(), situation()) is None


def test_it_goes_ahead_of_the_env_rewrite_whose_figure_is_the_env_made_free():
    ev = sb3_evidence(0.75)
    ev.cpu_count = 2
    verdict = {"bottleneck": "input.env", "share": 0.75}
    ids = [a["id"] for a in advise(ev, verdict, [])]
    assert ids[:2] == ["subproc-vec-env", "vectorised-env"], ids
    rewrite = vectorised_env.build(ev, env_verdict(0.75))
    assert "stable_baselines3.common.vec_env.VecEnv" in rewrite["snippet"] and "make_vec(" not in rewrite["snippet"]
    assert "profile Renderer's step through Downsize" in rewrite["snippet"] and rewrite["where"] == "train.py:40"
