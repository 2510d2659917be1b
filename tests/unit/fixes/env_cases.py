"""Evidence of a reinforcement-learning run for the environment fixes' tests: a SyncVectorEnv of 4
CartPole-v1 stepped at ppo.py:210, its steps 60% of the training time, on 4 cores."""

from gpuprof.analysis import bottlenecks
from tests.unit.fixes.cases import evidence, situation

ENV = {"cls": "SyncVectorEnv", "vector": True, "vector_cls": "SyncVectorEnv", "num_envs": 4, "async": False,
       "spec": "CartPole-v1", "vector_entry_point": True, "where": "ppo.py:210", "seconds": 6.0, "calls": 1500,
       "per_call_s": 0.004, "share": 0.6}


def env_evidence(share=0.6, **env):
    return evidence(loader=None, wait_share=0.01, wait_source="before-first-forward", env=dict(ENV, share=share, **env),
                    env_share=share)


def env_verdict(share=0.6):
    return situation(bottlenecks.INPUT_ENV.id, share)


def env_finding(share=0.115):
    """A compute verdict with the env's share as a finding beside it."""
    return situation(bottlenecks.COMPUTE.id, 0.8, findings=({"bottleneck": bottlenecks.INPUT_ENV.id, "share": share},))
