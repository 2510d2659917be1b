import pytest

from gpuprof.advice.fixes import async_vector_env
from tests.unit.fixes.cases import situation, up_to
from tests.unit.fixes.env_cases import env_evidence, env_verdict


def test_a_sync_vector_env_steps_its_envs_in_parallel_bounded_by_the_cores():
    built = async_vector_env.build(env_evidence(0.6), env_verdict())
    # 4 envs on 4 cores: the 60% share falls to 15%.
    assert built["estimated_speedup"] == pytest.approx(1 / (1 - 0.6 * 0.75))
    assert "AsyncVectorEnv" in built["snippet"] and 'vectorization_mode="async"' in built["snippet"]
    assert built["where"] == "ppo.py:210" and up_to(built) in built["why"]


def test_parallel_processes_are_bounded_by_the_machines_cores():
    ev = env_evidence(0.6)
    ev.cpu_count = 2
    assert async_vector_env.build(ev, env_verdict())["estimated_speedup"] == pytest.approx(1 / (1 - 0.6 * 0.5))


def test_not_offered_when_already_async_single_env_cheap_steps_or_no_env_bottleneck():
    assert async_vector_env.build(env_evidence(**{"async": True}), env_verdict()) is None
    assert async_vector_env.build(env_evidence(num_envs=None), env_verdict()) is None
    # 4 CartPoles in 60 microseconds: messages to 4 processes would cost more than the steps.
    assert async_vector_env.build(env_evidence(per_call_s=60e-6), env_verdict()) is None
    assert async_vector_env.build(env_evidence(), situation()) is None
