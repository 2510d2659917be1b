"""Evidence of a reinforcement-learning run for the environment fixes' tests: a SyncVectorEnv of 4
CartPole-v1 stepped at ppo.py:210, its steps 60% of the training time, on 4 cores; or Stable-
Baselines3's PPO stepping a DummyVecEnv of 4 made by make_vec_env at train.py:40."""

from gpuprof.judge.verdict import bottlenecks
from tests.unit.fixes.cases import evidence, situation

ENV = {"cls": "SyncVectorEnv", "vector": True, "vector_cls": "SyncVectorEnv", "num_envs": 4, "async": False,
       "spec": "CartPole-v1", "vector_entry_point": True, "where": "ppo.py:210", "seconds": 6.0, "calls": 1500,
       "per_call_s": 0.004, "share": 0.6}


def env_evidence(share=0.6, **env):
    return evidence(loader=None, wait_share=0.01, wait_source="before-first-forward",
                    env=dict(ENV, **dict(env, share=share)), env_share=share)


#: SB3's PPO (n_steps 64) stepping VecTransposeImage(DummyVecEnv of 4 Renderer envs, each wrapped in
#: Downsize and SB3's Monitor), made by make_vec_env(Renderer, n_envs=4, wrapper_class=Downsize) at train.py:40.
SB3_ENV = dict(ENV, cls="VecTransposeImage", vector_cls="DummyVecEnv", spec=None, vector_entry_point=False,
               library="stable-baselines3", wrappers=["VecTransposeImage"], sub_env="Renderer",
               sub_wrappers=["Downsize", "Monitor"], where="train.py:52", built_in="stable_baselines3/common/"
               "on_policy_algorithm.py:218", algorithm="PPO", n_steps=64, made_with="make_vec_env", maker="Renderer",
               maker_is_id=False, n_envs=4, wrapper_class="Downsize", vec_env_cls_given="DummyVecEnv",
               make_where="train.py:40", per_call_s=0.005)


def sb3_evidence(share=0.6, **env):
    fields = {key: value for key, value in dict(SB3_ENV, **env).items() if key != "share"}
    return env_evidence(share, **fields)


def env_verdict(share=0.6):
    return situation(bottlenecks.INPUT_ENV.id, share)


def env_finding(share=0.115):
    """A compute verdict with the env's share as a finding beside it."""
    return situation(bottlenecks.COMPUTE.id, 0.8, findings=({"bottleneck": bottlenecks.INPUT_ENV.id, "share": share},))
