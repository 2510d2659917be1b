"""Stable-Baselines3 PPO on pixel observations, Atari-style: 4 envs in SB3's DummyVecEnv (make_vec_env),
each rendering a 210x160 RGB frame that a WarpFrame-like wrapper turns to 84x84 grey, 4 frames
stacked by VecFrameStack, a CnnPolicy.

Adapted from DLR-RM/stable-baselines3 docs/guide/examples.rst, "Atari Games" (MIT): make_vec_env over
n_envs copies of an env, a frame-warping observation wrapper, VecFrameStack(n_stack=4),
PPO("CnnPolicy", ...).learn(). Changed: the Atari emulator is replaced by a paddle-and-ball game drawn
with numpy (no ROM), the wrapper resizes with PIL instead of OpenCV, a smaller rollout (n_steps=64)
and a small CNN (features_dim=64), a fixed step budget.

    python train.py [--steps N]     (N: environment steps over all envs)
"""
import argparse

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from PIL import Image
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack

HEIGHT, WIDTH = 210, 160


class PaddleGame(gym.Env):
    """A ball bouncing off the walls and a paddle at the bottom; reward for each return, the episode
    ends on a miss or after 500 frames. The observation is the rendered screen."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self):
        self.observation_space = spaces.Box(0, 255, (HEIGHT, WIDTH, 3), np.uint8)
        self.action_space = spaces.Discrete(3)
        rows = np.arange(HEIGHT, dtype=np.float32)[:, None]
        self._background = np.repeat(np.stack([rows * 0.3, 40 + rows * 0.1, 90 - rows * 0.2], -1), WIDTH, 1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._ball = np.array([HEIGHT / 3, self.np_random.uniform(20, WIDTH - 20)], dtype=np.float32)
        self._vel = np.array([3.0, self.np_random.choice([-3.0, 3.0])], dtype=np.float32)
        self._paddle, self._t = WIDTH / 2, 0
        return self._render(), {}

    def step(self, action):
        self._paddle = float(np.clip(self._paddle + (action - 1) * 6.0, 12, WIDTH - 12))
        self._ball += self._vel
        reward, done = 0.0, False
        if not 4 <= self._ball[1] <= WIDTH - 4:
            self._vel[1] *= -1
        if self._ball[0] <= 4:
            self._vel[0] *= -1
        if self._ball[0] >= HEIGHT - 14:
            if abs(self._ball[1] - self._paddle) <= 14:
                self._vel[0] *= -1
                reward = 1.0
            else:
                done = True
        self._t += 1
        return self._render(), reward, done, self._t >= 500, {}

    def _render(self):
        frame = self._background.copy()
        ys, xs = np.ogrid[:HEIGHT, :WIDTH]
        ball = (ys - self._ball[0]) ** 2 + (xs - self._ball[1]) ** 2 <= 16
        frame[ball] = (236, 236, 236)
        frame[HEIGHT - 10:HEIGHT - 6, int(self._paddle) - 12:int(self._paddle) + 12] = (200, 72, 72)
        return frame.astype(np.uint8)


class WarpFrame(gym.ObservationWrapper):
    """84x84 greyscale, as SB3's AtariWrapper warps frames."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_space = spaces.Box(0, 255, (84, 84, 1), np.uint8)

    def observation(self, frame):
        grey = Image.fromarray(frame).convert("L").resize((84, 84), Image.BILINEAR)
        return np.asarray(grey)[:, :, None]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4096)
    args = parser.parse_args()
    torch.manual_seed(0)
    env = make_vec_env(PaddleGame, n_envs=4, seed=0, wrapper_class=WarpFrame, vec_env_cls=DummyVecEnv)
    env = VecFrameStack(env, n_stack=4)
    model = PPO("CnnPolicy", env, n_steps=64, batch_size=64, n_epochs=2, learning_rate=2.5e-4, seed=0, verbose=0,
                policy_kwargs={"features_extractor_kwargs": {"features_dim": 64}})
    model.learn(total_timesteps=args.steps)
    losses = model.logger.name_to_value
    print(f"final loss {float(losses.get('train/loss', float('nan'))):.4f}")
    env.close()


if __name__ == "__main__":
    main()
