"""The PPO-shaped loop of ppo_rollout.py with an environment whose step is slow (each sub-env step
sleeps SLOW_S, standing for a physics simulator): env stepping is most of the time, in the program
or, with --async, as its wait for the subprocesses of an AsyncVectorEnv."""

import sys
import time

import gymnasium as gym

from ppo_rollout import train

SLOW_S = 0.001


class SlowStep(gym.Wrapper):
    def step(self, action):
        time.sleep(SLOW_S)
        return self.env.step(action)


if __name__ == "__main__":
    # --async: the sub-environments step in subprocesses (AsyncVectorEnv).
    vector = gym.vector.AsyncVectorEnv if "--async" in sys.argv else gym.vector.SyncVectorEnv
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()]
    train(wrap=SlowStep, iterations=counts[0] if counts else 6, name="ppo_slow_env", vector=vector)
