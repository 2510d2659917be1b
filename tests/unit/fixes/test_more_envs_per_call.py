from gpuprof.advice import fixes
from gpuprof.advice.fixes import more_envs_per_call
from tests.unit.fixes.cases import situation
from tests.unit.fixes.env_cases import env_evidence, env_verdict


def test_twice_the_envs_and_half_the_rollout_not_estimated_and_changes_training():
    built = more_envs_per_call.build(env_evidence(), env_verdict())
    assert built["estimated_speedup"] is None and "range(8)" in built["snippet"]
    assert "num_steps // 2" in built["snippet"] and "1500 vector steps" in built["why"]
    assert fixes.get(more_envs_per_call.FIX.id).changes_training


def test_not_offered_for_a_single_env_or_without_an_env_bottleneck():
    assert more_envs_per_call.build(env_evidence(num_envs=None), env_verdict()) is None
    assert more_envs_per_call.build(env_evidence(), situation()) is None
