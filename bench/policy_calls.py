"""What `rollout-inference` saves of one rollout policy call, on policies of several shapes.

A rollout calls its policy once per vector step: a forward of the actor (and the critic), an action
drawn from a distribution, its log-probability. The fix runs that call under
`torch.inference_mode()` instead of `torch.no_grad()` and builds the distribution with
`validate_args=False`. Each policy is called CALLS times each way, in turns over ROUNDS rounds, in
one process with one intra-op thread (as the PPO programs set), and the script prints the median
time of a call each way, the share of the call saved and the microseconds saved.

The policies: tests/programs/ppo_rollout.py's agent on CartPole-v1's shapes (4 observations, 2
actions, 4 envs) and on Acrobot-v1's (6, 3); CleanRL's continuous-action agent (ppo_continuous_action.py's
shape: a Normal distribution over 6 actions from 17 observations, 4 envs); CleanRL's Atari agent
(ppo_atari.py's shape: three convolutions over 4 stacked 84 x 84 frames, 8 envs).

The prior `rollout-inference.saving` (gpuprof/priors/rollout_fixes.py) is checked against this script.

    python bench/policy_calls.py [--rounds R] [--calls N]
"""

import argparse
import os
import statistics
import sys
import time

import torch
from torch import nn
from torch.distributions import Categorical, Normal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "programs"))
from ppo_rollout import Agent  # noqa: E402

ROUNDS, CALLS, WARM_UP = 5, 400, 50


class ContinuousAgent(nn.Module):
    """ppo_continuous_action.py's actor-critic: a Normal with a learned log-std per action."""

    def __init__(self, obs_size=17, actions=6):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor_mean = nn.Sequential(nn.Linear(obs_size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                                        nn.Linear(64, actions))
        self.actor_logstd = nn.Parameter(torch.zeros(1, actions))

    def get_action_and_value(self, x, validate_args=None):
        mean = self.actor_mean(x)
        dist = Normal(mean, self.actor_logstd.expand_as(mean).exp(), validate_args=validate_args)
        action = dist.sample()
        return action, dist.log_prob(action).sum(1), dist.entropy().sum(1), self.critic(x)


class AtariAgent(nn.Module):
    """ppo_atari.py's network: the Nature DQN convolutions, a shared trunk, actor and critic heads."""

    def __init__(self, actions=6):
        super().__init__()
        self.network = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
                                     nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(),
                                     nn.Linear(64 * 7 * 7, 512), nn.ReLU())
        self.actor = nn.Linear(512, actions)
        self.critic = nn.Linear(512, 1)

    def get_action_and_value(self, x, validate_args=None):
        hidden = self.network(x / 255.0)
        dist = Categorical(logits=self.actor(hidden), validate_args=validate_args)
        action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(hidden)


def discrete_call(agent):
    """ppo_rollout's Agent builds its Categorical itself: the unchecked call builds it the fix's way."""
    def call(x, validate_args=None):
        dist = Categorical(logits=agent.actor(x), validate_args=validate_args)
        action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), agent.critic(x)
    return call


POLICIES = {  # name: (the call, one batch of observations)
    "ppo_rollout agent, CartPole-v1 shapes (4 obs, 2 actions, 4 envs)": (discrete_call(Agent(4, 2)), torch.rand(4, 4)),
    "ppo_rollout agent, Acrobot-v1 shapes (6 obs, 3 actions, 4 envs)": (discrete_call(Agent(6, 3)), torch.rand(4, 6)),
    "continuous-action agent (17 obs, Normal over 6 actions, 4 envs)": (ContinuousAgent().get_action_and_value,
                                                                         torch.rand(4, 17)),
    "Atari agent (4 x 84 x 84 frames, 8 envs)": (AtariAgent().get_action_and_value,
                                                 torch.randint(0, 256, (8, 4, 84, 84)).float()),
}


def timed(call, x, fixed: bool, calls: int) -> float:
    """The median seconds of one call: the program's way (no_grad, checked) or the fix's."""
    times = []
    for i in range(calls + WARM_UP):
        started = time.perf_counter()
        if fixed:
            with torch.inference_mode():
                call(x, validate_args=False)
        else:
            with torch.no_grad():
                call(x)
        if i >= WARM_UP:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for name, (call, x) in POLICIES.items():
        plain, fixed = [], []
        for _ in range(args.rounds):
            plain.append(timed(call, x, False, args.calls))
            fixed.append(timed(call, x, True, args.calls))
        p, f = statistics.median(plain), statistics.median(fixed)
        shares = [1 - b / a for a, b in zip(plain, fixed)]
        print(f"{name}: {p * 1e6:.0f} µs a call, fixed {f * 1e6:.0f} µs: saves {1 - f / p:.0%} "
              f"(rounds {min(shares):.0%}-{max(shares):.0%}), {(p - f) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
