"""The gymnasium probe, in a fresh interpreter (it patches gymnasium's classes): every step class
wrapped, the ones defined later too; only the outermost call of a vector env stepping wrapped
sub-envs counted; results the same as without the probe."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("gymnasium")

SCRIPT = r"""
import json, sys
import gymnasium as gym
import numpy as np

def rollout():
    envs = gym.vector.SyncVectorEnv([lambda: gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"))
                                     for _ in range(3)])
    obs, _ = envs.reset(seed=3)
    seen = [obs.tolist()]
    for i in range(40):
        obs, reward, term, trunc, _ = envs.step(np.array([i % 2, 1, 0]))
        seen.append(obs.tolist())
    return seen

plain = rollout() if sys.argv[1] == "compare" else None
from gpuprof.capture.probes import runtime, gym_env
events = []
runtime.emit = events.append
gym_env.install(gym)

class Custom(gym.Env):                    # defined after the probe is installed
    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)
    def reset(self, seed=None, options=None):
        return 0, {}
    def step(self, action):
        return 0, 1.0, False, False, {}

probed = rollout()
custom = Custom()
for _ in range(5):
    custom.step(0)
gym_env._emit()
print(json.dumps({"same": plain == probed if plain is not None else None, "events": events}))
"""


def run(mode):
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_outermost_steps_are_counted_once_and_results_are_unchanged():
    got = run("compare")
    assert got["same"] is True
    described = [e for e in got["events"] if e["k"] == "env"]
    sums = [e for e in got["events"] if e["k"] == "env_steps"]
    # 40 vector steps (each stepping 3 wrapped CartPoles) and 5 steps of a class defined later.
    assert sums[0]["calls"] == 0 and sums[-1]["calls"] == 45
    assert sums[-1]["seconds"] > 0
    vector = next(e for e in described if e["vector"])
    assert vector["cls"] == "SyncVectorEnv" and vector["num_envs"] == 3 and vector["spec"] == "CartPole-v1"
    assert vector["async"] is False and vector["vector_entry_point"] is True
    assert any(e["cls"] == "Custom" and not e["vector"] for e in described)
