import pytest

from gpuprof.advise.fixes import vectorised_env
from tests.unit.fixes.cases import situation, up_to
from tests.unit.fixes.env_cases import env_evidence, env_finding, env_verdict


def test_the_registered_vectorised_env_bounded_by_env_stepping_made_free():
    built = vectorised_env.build(env_evidence(0.6), env_verdict())
    assert built["estimated_speedup"] == pytest.approx(1 / 0.4)
    assert 'make_vec(\'CartPole-v1\', num_envs=4, vectorization_mode="vector_entry_point")' in built["snippet"]
    assert up_to(built) in built["why"]


def test_an_env_without_a_vectorised_version_is_to_be_made_faster():
    built = vectorised_env.build(env_evidence(0.6, vector_entry_point=False), env_verdict())
    assert "make_vec" not in built["snippet"] and "profile the env's step" in built["snippet"]


def test_offered_for_an_env_finding_too_and_never_without_one():
    assert vectorised_env.build(env_evidence(0.115), env_finding())["estimated_speedup"] == pytest.approx(1 / 0.885)
    assert vectorised_env.build(env_evidence(0.6), situation()) is None


def test_gymnasiums_registered_vectorised_env_only_for_gymnasium():
    from tests.unit.fixes.env_cases import sb3_evidence
    sb3 = vectorised_env.build(sb3_evidence(spec="CartPole-v1", vector_entry_point=True), env_verdict())
    assert "make_vec(" not in sb3["snippet"] and "gymnasium" not in sb3["snippet"]
