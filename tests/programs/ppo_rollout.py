"""A PPO-shaped loop (CleanRL's ppo.py in miniature): CartPole on a SyncVectorEnv, a small MLP
policy and value, a rollout of NUM_STEPS env steps, then UPDATE_EPOCHS passes of minibatch updates.
Env stepping is a small part of the time; policy inference and host work are the rest of the
rollout. With --eval-rollout the policy collects in eval mode. Prints a checksum of the final
parameters so runs with and without gpuprof compare."""

import sys

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

NUM_ENVS, NUM_STEPS, ITERATIONS = 4, 128, 10
UPDATE_EPOCHS, MINIBATCHES = 4, 4


def make_env(env_id, seed, wrap=None):
    def thunk():
        env = gym.make(env_id)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        if wrap is not None:
            env = wrap(env)
        env.action_space.seed(seed)
        return env
    return thunk


class Agent(nn.Module):
    def __init__(self, obs_size, actions):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor = nn.Sequential(nn.Linear(obs_size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                                   nn.Linear(64, actions))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def train(wrap=None, iterations=ITERATIONS, name="ppo_rollout", vector=gym.vector.SyncVectorEnv, eval_rollout=False):
    torch.manual_seed(1)
    np.random.seed(1)
    torch.set_num_threads(1)
    envs = vector([make_env("CartPole-v1", 1 + i, wrap) for i in range(NUM_ENVS)])
    agent = Agent(envs.single_observation_space.shape[0], envs.single_action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs = torch.zeros((NUM_STEPS, NUM_ENVS) + envs.single_observation_space.shape)
    actions = torch.zeros((NUM_STEPS, NUM_ENVS))
    logprobs, rewards, dones, values = (torch.zeros((NUM_STEPS, NUM_ENVS)) for _ in range(4))
    next_obs, _ = envs.reset(seed=1)
    next_obs, next_done = torch.Tensor(next_obs), torch.zeros(NUM_ENVS)
    batch = NUM_ENVS * NUM_STEPS
    minibatch = batch // MINIBATCHES
    for _ in range(iterations):
        agent.train(not eval_rollout)                       # some programs collect in eval mode
        for step in range(NUM_STEPS):                       # collection: the rollout
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs, reward, terminated, truncated, _ = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs, next_done = torch.Tensor(next_obs), torch.Tensor(np.logical_or(terminated, truncated))
        agent.train()
        with torch.no_grad():                               # advantages (GAE)
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages, last = torch.zeros_like(rewards), 0
            for t in reversed(range(NUM_STEPS)):
                nonterminal = 1.0 - (next_done if t == NUM_STEPS - 1 else dones[t + 1])
                following = next_value if t == NUM_STEPS - 1 else values[t + 1]
                delta = rewards[t] + 0.99 * following * nonterminal - values[t]
                advantages[t] = last = delta + 0.99 * 0.95 * nonterminal * last
            returns = advantages + values
        b_obs, b_actions = obs.reshape((-1, 4)), actions.reshape(-1)
        b_logprobs, b_adv, b_returns = logprobs.reshape(-1), advantages.reshape(-1), returns.reshape(-1)
        order = np.arange(batch)
        for _ in range(UPDATE_EPOCHS):                      # learning: the update
            np.random.shuffle(order)
            for start in range(0, batch, minibatch):
                idx = order[start:start + minibatch]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[idx], b_actions.long()[idx])
                ratio = (newlogprob - b_logprobs[idx]).exp()
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 0.8, 1.2)).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[idx]) ** 2).mean()
                loss = pg_loss - 0.01 * entropy.mean() + 0.5 * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    envs.close()
    checksum = sum(float(p.detach().double().sum()) for p in agent.parameters())
    print(f"{name}: done {checksum:.6f}")


if __name__ == "__main__":
    # --eval-rollout: the policy is in eval mode while it collects (model.eval() / model.train()).
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()]
    train(iterations=counts[0] if counts else ITERATIONS, eval_rollout="--eval-rollout" in sys.argv)
