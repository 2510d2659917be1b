"""The Stable-Baselines3 probe, in fresh interpreters (it patches SB3's and gymnasium's classes):
armed without importing SB3; a DummyVecEnv under VecEnvWrappers timed as one vector step per call
(its sub-envs' steps inside it), described in SB3's terms with how make_vec_env made it; results
the same as without the probe; an env class of the program's __main__ pickled with its wrapped step
(as SubprocVecEnv sends it to its processes) unpickles and steps where gpuprof is not loaded; a
loop of the program's own over plain envs is a vector env of that many."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

ENV_CLASS = r"""
import gymnasium as gym
import numpy as np

class Walker(gym.Env):
    observation_space = gym.spaces.Box(-10, 10, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)
    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x.copy(), {}
    def step(self, action):
        self.x = self.x + (0.1 if action else -0.1)
        return self.x.copy(), float(-abs(self.x[0])), bool(abs(self.x[0]) > 5), False, {}

class Scale(gym.ObservationWrapper):
    def observation(self, obs):
        return obs * 0.5
"""

SCRIPT = ENV_CLASS + r"""
import sys
from gpuprof.capture.probes import runtime
events = []
runtime.emit = events.append
from gpuprof.capture.probes.install import arm
arm({})
imported_by_arming = "stable_baselines3" in sys.modules
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize

def rollout():
    envs = VecFrameStack(VecNormalize(make_vec_env(Walker, n_envs=3, seed=2, wrapper_class=Scale)), n_stack=2)
    obs = envs.reset()
    seen = [obs.tolist()]
    for i in range(30):
        obs, reward, done, info = envs.step(np.array([i % 2, 1, 0]))
        seen.append(obs.tolist())
    return seen

probed = rollout()
from gpuprof.capture.probes import gym_env
gym_env._emit()
print(json.dumps({"imported_by_arming": imported_by_arming, "seen": probed, "events": events}))
"""

PLAIN = ENV_CLASS + r"""
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize
envs = VecFrameStack(VecNormalize(make_vec_env(Walker, n_envs=3, seed=2, wrapper_class=Scale)), n_stack=2)
obs = envs.reset()
seen = [obs.tolist()]
for i in range(30):
    obs, reward, done, info = envs.step(np.array([i % 2, 1, 0]))
    seen.append(obs.tolist())
print(json.dumps({"seen": seen}))
"""

PICKLED = ENV_CLASS + r"""
import sys, cloudpickle
from gpuprof.capture.probes import runtime, gym_env
runtime.emit = lambda event: None
gym_env.install(gym)
assert getattr(Walker.step, "_gpuprof", False)
payload = cloudpickle.dumps(Walker)
unpickle = "import pickle, sys; env = pickle.loads(sys.stdin.buffer.read())(); env.reset(seed=0); " \
           "print(env.step(1)[1], 'gpuprof' in sys.modules)"
import subprocess
out = subprocess.run([sys.executable, "-c", unpickle], input=payload, capture_output=True, timeout=60)
print(json.dumps({"rc": out.returncode, "out": out.stdout.decode().strip(), "err": out.stderr.decode()[-400:]}))
"""

FAN_OUT = ENV_CLASS + r"""
from gpuprof.capture.probes import runtime, gym_env
events = []
runtime.emit = events.append
gym_env.install(gym)

class Envs:                                   # a vector env of the program's own
    def __init__(self, n):
        self.envs = [Walker() for _ in range(n)]
    def step(self, actions):
        return [env.step(a) for env, a in zip(self.envs, actions)]

envs = Envs(4)
for env in envs.envs:
    env.reset(seed=0)
for _ in range(10):
    envs.step([1, 0, 1, 0])
gym_env._emit()
print(json.dumps({"events": events}))
"""


def run(script, tmp_path, name="program.py"):
    """The script's last line of output, as JSON; the script is written to tmp_path/name."""
    path = tmp_path / name
    path.write_text("import json\n" + script)
    out = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh interpreter that imports torch: the slow tier
def test_sb3_vector_steps_are_counted_once_in_sb3_terms_and_results_are_unchanged(tmp_path):
    got, plain = run(SCRIPT, tmp_path), run(PLAIN, tmp_path, "plain.py")
    assert got["imported_by_arming"] is False
    assert got["seen"] == plain["seen"]
    sums = [e for e in got["events"] if e["k"] == "env_steps"]
    assert sums[-1]["calls"] == 30 and sums[-1]["seconds"] > 0       # vector steps, not 90 sub-env steps
    described = [e for e in got["events"] if e["k"] == "env"]
    assert len(described) == 1, described
    env = described[0]
    assert env["library"] == "stable-baselines3" and env["vector"] is True and env["num_envs"] == 3
    assert env["cls"] == "VecFrameStack" and env["wrappers"] == ["VecFrameStack", "VecNormalize"]
    assert env["vector_cls"] == "DummyVecEnv" and env["async"] is False
    assert env["sub_env"] == "Walker" and env["sub_wrappers"] == ["Scale", "Monitor"]
    assert env["made_with"] == "make_vec_env" and env["maker"] == "Walker" and env["maker_is_id"] is False
    assert env["n_envs"] == 3 and env["wrapper_class"] == "Scale" and env["vec_env_cls_given"] is None
    # The program's lines: its make_vec_env call, and its step call (SB3's vec_env package passed over).
    lines = (tmp_path / "program.py").read_text().splitlines()
    made = next(i for i, line in enumerate(lines, 1) if "make_vec_env(Walker" in line)
    stepped = next(i for i, line in enumerate(lines, 1) if "envs.step(" in line)
    assert env["make_where"].endswith(f"program.py:{made}") and env["where"].endswith(f"program.py:{stepped}"), env
    assert "algorithm" not in env       # the program's own loop, not SB3's collect_rollouts


def test_an_env_class_pickled_with_its_wrapped_step_steps_where_gpuprof_is_not_loaded(tmp_path):
    got = run(PICKLED, tmp_path)
    assert got["rc"] == 0, got["err"]
    assert got["out"].endswith(" False"), got        # stepped, without importing gpuprof


def test_a_loop_of_the_programs_own_over_plain_envs_is_a_vector_env_of_that_many(tmp_path):
    got = run(FAN_OUT, tmp_path)
    described = [e for e in got["events"] if e["k"] == "env"]
    fan_out = [e for e in described if e.get("fan_out")]
    assert len(fan_out) == 1, described
    assert fan_out[0]["num_envs"] == 4 and fan_out[0]["vector_cls"] == "Envs" and fan_out[0]["sub_env"] == "Walker"
    assert fan_out[0]["vector"] is True and fan_out[0]["library"] is None
    sums = [e for e in got["events"] if e["k"] == "env_steps"]
    assert sums[-1]["calls"] == 40      # each sub-env's step: the analysis divides by the envs
