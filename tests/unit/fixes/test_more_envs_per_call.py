from gpuprof.advise import fixes
from gpuprof.advise.fixes import more_envs_per_call
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


def test_in_sb3_terms_twice_n_envs_in_its_make_vec_env_call_and_half_the_algorithms_n_steps():
    from tests.unit.fixes.env_cases import sb3_evidence
    built = more_envs_per_call.build(sb3_evidence(), env_verdict())
    assert built["snippet"].splitlines() == [
        "envs = make_vec_env(Renderer, n_envs=8, wrapper_class=Downsize)   # your other arguments as at train.py:40",
        "model = PPO(policy, envs, n_steps=32)   # half of 64: the same samples per update; your other arguments as "
        "before"]
    assert built["where"] == "train.py:40" and "SyncVectorEnv" not in built["snippet"]


def test_an_sb3_algorithm_without_n_steps_is_not_given_one():
    from tests.unit.fixes.env_cases import sb3_evidence
    built = more_envs_per_call.build(sb3_evidence(algorithm="SAC", n_steps=None), env_verdict())
    assert "n_steps" not in built["snippet"] and "n_envs=8" in built["snippet"]
