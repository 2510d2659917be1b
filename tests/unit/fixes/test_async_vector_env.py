import pytest

from gpuprof.advise.fixes import async_vector_env
from tests.unit.fixes.cases import situation, up_to
from tests.unit.fixes.env_cases import env_evidence, env_verdict

#: The messages to and from the processes per sub-env step (the fix's measured prior).
MESSAGES = async_vector_env.MESSAGE_S


def after(share, parallel, n=4, per_call=0.004):
    """The env's share once its n sub-envs step `parallel` at a time, with the messages added."""
    return share * (1 / parallel + n * MESSAGES / per_call)


def test_a_sync_vector_env_steps_its_envs_in_parallel_bounded_by_the_cores():
    built = async_vector_env.build(env_evidence(0.6), env_verdict())
    # 4 envs on 4 cores: the 60% share falls to 15%, and the messages add 4 x 65 µs to each 4 ms step.
    assert built["estimated_speedup"] == pytest.approx(1 / (1 - 0.6 + after(0.6, 4)))
    assert "AsyncVectorEnv" in built["snippet"] and 'vectorization_mode="async"' in built["snippet"]
    assert built["where"] == "ppo.py:210" and up_to(built) in built["why"]
    assert "4 at a time on 4 cores" in built["why"]


def test_parallel_processes_are_bounded_by_the_machines_cores():
    ev = env_evidence(0.6)
    ev.cpu_count = 2
    assert async_vector_env.build(ev, env_verdict())["estimated_speedup"] == pytest.approx(1 / (1 - 0.6 + after(0.6, 2)))


def test_cores_other_processes_held_are_not_the_jobs():
    ev = env_evidence(0.6)
    ev.cpu_count, ev.other_cores = 4, 1.5
    built = async_vector_env.build(ev, env_verdict())
    assert built["estimated_speedup"] == pytest.approx(1 / (1 - 0.6 + after(0.6, 2.5)))
    assert "2.5 at a time on the 2.5 cores left of 4 (other processes held 1.5)" in built["why"]


def test_not_offered_when_already_async_single_env_cheap_steps_or_no_env_bottleneck():
    assert async_vector_env.build(env_evidence(**{"async": True}), env_verdict()) is None
    assert async_vector_env.build(env_evidence(num_envs=None), env_verdict()) is None
    # 4 CartPoles in 60 microseconds: messages to 4 processes would cost more than the steps.
    assert async_vector_env.build(env_evidence(per_call_s=60e-6), env_verdict()) is None
    assert async_vector_env.build(env_evidence(), situation()) is None


def test_not_offered_for_stable_baselines3s_vector_envs():
    assert async_vector_env.build(env_evidence(library="stable-baselines3"), env_verdict()) is None


def test_the_scripts_own_switch_comes_first():
    ev = env_evidence(0.6)
    ev.program = {"command": ["python", "ppo.py", "--num-envs", "4"],
                  "options": [{"flags": ["--async"], "action": "store_true", "help": "step the envs in processes"}]}
    snippet = async_vector_env.build(ev, env_verdict())["snippet"]
    assert snippet.startswith("python ppo.py --num-envs 4 --async\n# the script's own --async option")
