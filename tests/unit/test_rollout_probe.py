"""The rollout probe, in a fresh interpreter (it wraps nn.Module.__call__ once an environment steps):
one collection phase per rollout, from the update's end to the next update's first forward, with
its env steps and the policy's calls outside autograd or in eval mode, never the update's; results
the same as without the probe. And the stack sampler's view of a conversion."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("gymnasium")
torch = pytest.importorskip("torch")

SCRIPT = r"""
import contextlib, json, sys, time
import gymnasium as gym
import numpy as np
import torch

def train(update_end):
    torch.manual_seed(0)
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(2)])
    policy = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    obs, _ = envs.reset(seed=0)
    seen = []
    for it in range(3):
        policy.train(it != 1)                         # the second rollout in eval mode, with autograd on
        for t in range(20):
            with (torch.no_grad() if it != 1 else contextlib.nullcontext()):
                action = policy(torch.as_tensor(obs)).argmax(1)
            obs, *_ = envs.step(action.numpy())
        policy.train()
        for k in range(2):                            # the update: forwards that record autograd
            loss = policy(torch.as_tensor(obs)).sum()
            loss.backward()
            update_end()
        seen.append(float(sum(p.detach().sum() for p in policy.parameters())))
    return seen

plain = train(lambda: None)
from gpuprof.capture.probes import runtime, gym_env, rollout, steps
events = []
runtime.emit = events.append
gym_env.install(gym)
wrapped_before = getattr(torch.nn.Module.__call__, "_gpuprof", False)

def update_end():                                     # what the steps probe keeps at an optimizer step
    steps._state["count"] += 1
    steps._state["last_end"] = time.monotonic()

probed = train(update_end)
rollout._close()
print(json.dumps({"same": plain == probed, "wrapped_before": wrapped_before,
                  "wrapped_after": getattr(torch.nn.Module.__call__, "_gpuprof", False),
                  "rollouts": [e for e in events if e["k"] == "rollout"]}))
"""


@pytest.mark.slow  # a fresh interpreter that imports torch: the slow tier
def test_each_rollout_is_one_phase_with_its_env_steps_and_inference_and_results_are_unchanged():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["same"] and not got["wrapped_before"] and got["wrapped_after"]
    phases = got["rollouts"]
    assert len(phases) == 3 and phases[-1].get("final")
    # Module calls are timed from the first env step on (the program's first policy call is before it);
    # a rollout's first call, before its first env step, joins it; the update's forwards never count.
    assert [p["env_calls"] for p in phases] == [20, 20, 20] and [p["inf_calls"] for p in phases] == [19, 20, 20]
    for phase, following in zip(phases, phases[1:]):
        assert phase["t0"] <= phase["first"] < phase["last"] < phase["t"] < following["t0"] <= following["first"]
        assert 0 < phase["env_s"] < phase["t"] - phase["t0"] and 0 < phase["inf_s"] < phase["t"] - phase["t0"]


def here():
    return sys._getframe(1)


def test_a_sample_on_a_line_converting_numpy_to_a_tensor_is_a_conversion_and_others_are_not():
    from gpuprof.capture.probes import rollout
    frame = here(); kind = rollout._sample_kind(frame); value = torch.as_tensor([1.0])  # noqa: E702
    assert kind == "conv_us" and value.shape == (1,)
    frame = here(); kind = rollout._sample_kind(frame); value = 1 + 2  # noqa: E702
    assert kind is None and value == 3


def test_a_sample_inside_a_module_call_stands_for_the_timed_forward_not_a_conversion():
    from gpuprof.capture.probes import rollout

    class Probe(torch.nn.Module):
        def forward(self, x):
            self.kind = rollout._sample_kind(sys._getframe()); return torch.as_tensor(x)  # noqa: E702

    probe = Probe()
    probe([1.0])
    assert probe.kind == "fwd_us"
