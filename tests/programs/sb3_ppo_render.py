"""Stable-Baselines3's PPO on 4 environments made with make_vec_env (SB3's DummyVecEnv, or its
SubprocVecEnv with --vec-env subproc), each rendering an RGB frame with numpy and an
ObservationWrapper downsizing it: stepping the environments, their rendering and resizing, is most
of the training time. torch runs one intra-op thread unless --torch-threads says otherwise (0:
torch's default, one per core). Seeds are fixed; prints the steps per second of the learning and a
checksum of the final parameters."""

import argparse
import time

import gymnasium as gym
import numpy as np
from gymnasium import spaces

FRAME = 96          # the rendered frame's side, in pixels
OBSERVED = 16       # the observation's side after the wrapper downsizes the frame
BALLS = 6


class DrawnBalls(gym.Env):
    """Balls bouncing in a box, the observation the rendered frame (anti-aliased discs over a shaded
    background); the agent pushes the first ball left or right and is rewarded for keeping it
    near the centre."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, render_mode="rgb_array"):
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 255, (FRAME, FRAME, 3), np.uint8)
        self.action_space = spaces.Discrete(2)
        grid = (np.arange(FRAME, dtype=np.float32) + 0.5) / FRAME
        self._ys, self._xs = np.meshgrid(grid, grid, indexing="ij")
        self._background = np.stack([self._xs, self._ys, 1.0 - self._xs * self._ys], axis=-1) * 80.0
        self._colours = np.random.default_rng(0).uniform(80, 255, size=(BALLS, 3)).astype(np.float32)
        self._steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._pos = self.np_random.uniform(0.2, 0.8, size=(BALLS, 2)).astype(np.float32)
        self._vel = self.np_random.normal(0, 0.02, size=(BALLS, 2)).astype(np.float32)
        self._steps = 0
        return self.render(), {}

    def step(self, action):
        self._vel[0, 0] += 0.01 if action == 1 else -0.01
        self._pos += self._vel
        bounced = (self._pos < 0.05) | (self._pos > 0.95)
        self._vel[bounced] *= -1.0
        self._pos = np.clip(self._pos, 0.05, 0.95)
        self._steps += 1
        reward = 1.0 - 2.0 * abs(float(self._pos[0, 0]) - 0.5)
        return self.render(), reward, False, self._steps >= 200, {}

    def render(self):
        frame = self._background.copy()
        for (x, y), colour in zip(self._pos, self._colours):
            distance = np.sqrt((self._xs - x) ** 2 + (self._ys - y) ** 2)
            cover = np.clip((0.08 - distance) * FRAME, 0.0, 1.0)[..., None]
            frame = frame * (1.0 - cover) + colour * cover
        return frame.astype(np.uint8)


class Downsize(gym.ObservationWrapper):
    """The rendered frame averaged down to OBSERVED x OBSERVED pixels."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_space = spaces.Box(0, 255, (OBSERVED, OBSERVED, 3), np.uint8)

    def observation(self, frame):
        k = FRAME // OBSERVED
        return frame.reshape(OBSERVED, k, OBSERVED, k, 3).mean(axis=(1, 3)).astype(np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vec-env", choices=["dummy", "subproc"], default="dummy",
                        help="the vectorised environment: SB3's DummyVecEnv or its SubprocVecEnv")
    parser.add_argument("--n-envs", type=int, default=4, help="number of parallel environments")
    parser.add_argument("--timesteps", type=int, default=4096)
    parser.add_argument("--torch-threads", type=int, default=1)
    args = parser.parse_args()

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    vec_env_cls = SubprocVecEnv if args.vec_env == "subproc" else DummyVecEnv
    envs = make_vec_env(DrawnBalls, n_envs=args.n_envs, seed=1, wrapper_class=Downsize, vec_env_cls=vec_env_cls)
    model = PPO("MlpPolicy", envs, n_steps=64, batch_size=64, n_epochs=2, seed=1, device="cpu", verbose=0)
    started = time.monotonic()
    model.learn(total_timesteps=args.timesteps)
    seconds = time.monotonic() - started
    envs.close()
    checksum = sum(float(p.detach().double().sum()) for p in model.policy.parameters())
    print(f"sb3_ppo_render: {args.vec_env} {model.num_timesteps} steps in {seconds:.2f} s, "
          f"{model.num_timesteps / seconds:.0f} steps/s")
    print(f"sb3_ppo_render: checksum {checksum:.6f}")
    print("sb3_ppo_render: done")


if __name__ == "__main__":
    main()
