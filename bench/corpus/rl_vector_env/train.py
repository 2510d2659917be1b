"""PPO on CartPole with Gymnasium's SyncVectorEnv: rollouts of policy inference and env steps, then updates.

Adapted from vwxyzjn/cleanrl (MIT), cleanrl/ppo.py: four CartPole-v1 copies in a SyncVectorEnv, 128
steps per rollout with the actor-critic queried one step at a time, GAE, then 4 epochs of 4
minibatches of clipped-surrogate updates with Adam and a learning rate annealed to zero. Changed:
written for the Gymnasium 1.x API (reset/step return info dicts and separate terminated/truncated
flags, autoreset on the step after an episode ends), no tensorboard or wandb, a fixed number of
rollouts.

    python train.py [--steps N]   (N rollouts of 128 steps; each is followed by 16 optimizer steps)
"""
import argparse
import random

import gymnasium as gym
import numpy as np
import torch
from torch import nn, optim
from torch.distributions.categorical import Categorical

ENV_ID = "CartPole-v1"
NUM_ENVS = 4
NUM_STEPS = 128
GAMMA, GAE_LAMBDA = 0.99, 0.95
UPDATE_EPOCHS, NUM_MINIBATCHES = 4, 4
CLIP_COEF, ENT_COEF, VF_COEF, MAX_GRAD_NORM = 0.2, 0.01, 0.5, 0.5
LEARNING_RATE = 2.5e-4


def make_env(env_id):
    def thunk():
        return gym.wrappers.RecordEpisodeStatistics(gym.make(env_id))

    return thunk


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, n_actions), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    seed = 1
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    envs = gym.vector.SyncVectorEnv([make_env(ENV_ID) for _ in range(NUM_ENVS)])
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    agent = Agent(obs_dim, envs.single_action_space.n)
    optimizer = optim.Adam(agent.parameters(), lr=LEARNING_RATE, eps=1e-5)
    batch_size = NUM_ENVS * NUM_STEPS
    minibatch_size = batch_size // NUM_MINIBATCHES

    obs = torch.zeros((NUM_STEPS, NUM_ENVS, obs_dim))
    actions = torch.zeros((NUM_STEPS, NUM_ENVS), dtype=torch.long)
    logprobs = torch.zeros((NUM_STEPS, NUM_ENVS))
    rewards = torch.zeros((NUM_STEPS, NUM_ENVS))
    dones = torch.zeros((NUM_STEPS, NUM_ENVS))
    values = torch.zeros((NUM_STEPS, NUM_ENVS))

    next_obs, _ = envs.reset(seed=seed)
    next_obs = torch.tensor(next_obs, dtype=torch.float32)
    next_done = torch.zeros(NUM_ENVS)
    returns_seen = []
    global_step = 0

    for update in range(1, args.steps + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / args.steps) * LEARNING_RATE

        for step in range(NUM_STEPS):
            global_step += NUM_ENVS
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
            rewards[step] = torch.tensor(reward, dtype=torch.float32)
            next_obs = torch.tensor(next_obs, dtype=torch.float32)
            next_done = torch.tensor(np.logical_or(terminated, truncated), dtype=torch.float32)
            if "episode" in info:
                returns_seen.extend(info["episode"]["r"][info["_episode"]].tolist())

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(NUM_STEPS)):
                if t == NUM_STEPS - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + GAMMA * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + GAMMA * GAE_LAMBDA * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, obs_dim))
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)

        b_inds = np.arange(batch_size)
        for epoch in range(UPDATE_EPOCHS):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - CLIP_COEF, 1 + CLIP_COEF)).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -CLIP_COEF, CLIP_COEF)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                loss = pg_loss - ENT_COEF * entropy.mean() + VF_COEF * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
                optimizer.step()

        if update % 10 == 0:
            recent = returns_seen[-20:]
            print(f"update {update} steps {global_step} return {np.mean(recent) if recent else 0:.1f} loss {loss.item():.4f}", flush=True)
    envs.close()
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
