"""How much of the cores sub-environments stepped in processes really get: the parallel efficiency
behind subproc-vec-env's and async-vector-env's estimates.

The estimates (gpuprof.advise.env_terms.parallel_estimate) step min(n, c) sub-envs at a time on the
c cores and add the messages measured by bench/env_messages.py. Processes that share the cores with
one another and with the training process lose some of that to scheduling and to each other's
caches. Here a vector env of n sub-envs whose step costs a millisecond or two is stepped in process
and in processes, STEPS vector steps after a warm-up, ROUNDS times in turns, and

    parallelism = in-process vector step / (in-processes vector step - n * message cost)
    efficiency  = parallelism / min(n, cores)

from each variant's rounds' medians. Two env shapes:

- frames: tests/programs/sb3_ppo_render.py's env (numpy draws a 96x96 frame, a wrapper averages it
  down), the program the efficiency is calibrated on;
- physics: a pure-Python step (particles moved and bounced in Python floats), no numpy in the step.

Libraries: Stable-Baselines3 (DummyVecEnv against SubprocVecEnv) and gymnasium (SyncVectorEnv
against AsyncVectorEnv). The estimates do not use its figure yet: what it measured, and why one
efficiency does not fit both shapes, is in docs/benchmarks.md. Run it on an otherwise idle machine.

    python bench/env_parallel.py [--rounds R] [--envs N] [--shape frames|physics|both]
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from gpuprof.priors.rollout_fixes import ASYNC_MESSAGES, SUBPROC_MESSAGES  # noqa: E402

STEPS, WARM_UP, ROUNDS = 300, 30, 3
PARTICLES = 2400         # the physics env's particles: about a millisecond a step in Python floats


def frames_env():
    """sb3_ppo_render's env with its wrapper, imported from the program itself."""
    spec = importlib.util.spec_from_file_location("sb3_ppo_render", os.path.join(ROOT, "tests", "programs",
                                                                                 "sb3_ppo_render.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Downsize(module.DrawnBalls())


def physics_env():
    import gymnasium as gym
    import numpy as np
    from gymnasium import spaces

    class Particles(gym.Env):
        """Particles in a box, moved and bounced one by one in Python; the observation is the first
        eight coordinates."""

        def __init__(self):
            self.observation_space = spaces.Box(-1.0, 2.0, (8,), np.float32)
            self.action_space = spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            rng = self.np_random
            self._state = [[float(rng.uniform(0, 1)), float(rng.uniform(0, 1)), float(rng.normal(0, 0.01)),
                            float(rng.normal(0, 0.01))] for _ in range(PARTICLES)]
            self._steps = 0
            return self._observation(), {}

        def step(self, action):
            push = 0.001 if action == 1 else -0.001
            for p in self._state:
                p[2] += push
                for axis in (0, 1):
                    p[axis] += p[axis + 2]
                    if p[axis] < 0.0 or p[axis] > 1.0:
                        p[axis + 2] = -p[axis + 2]
                        p[axis] = min(max(p[axis], 0.0), 1.0)
            self._steps += 1
            return self._observation(), 0.0, False, self._steps >= 200, {}

        def _observation(self):
            return np.array([v for p in self._state[:2] for v in p], dtype=np.float32)

    return Particles()


SHAPES = {"frames": frames_env, "physics": physics_env}


def _maker(shape: str):
    make = SHAPES[shape]

    def thunk():
        return make()
    return thunk


def sb3(shape: str, parallel: bool, n: int):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    return (SubprocVecEnv if parallel else DummyVecEnv)([_maker(shape) for _ in range(n)])


def gymnasium(shape: str, parallel: bool, n: int):
    import gymnasium as gym
    return (gym.vector.AsyncVectorEnv if parallel else gym.vector.SyncVectorEnv)([_maker(shape) for _ in range(n)])


LIBRARIES = {"stable-baselines3": (sb3, SUBPROC_MESSAGES.value), "gymnasium": (gymnasium, ASYNC_MESSAGES.value)}


def vector_step_s(make, shape: str, parallel: bool, n: int) -> float:
    """The median vector step, in seconds, over STEPS steps after WARM_UP."""
    import numpy as np
    envs = make(shape, parallel, n)
    envs.reset() if make is sb3 else envs.reset(seed=0)
    actions = np.zeros(n, dtype=np.int64)
    for _ in range(WARM_UP):
        envs.step(actions)
    times = []
    for _ in range(STEPS):
        started = time.perf_counter()
        envs.step(actions)
        times.append(time.perf_counter() - started)
    envs.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--shape", choices=[*SHAPES, "both"], default="both")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    shapes = list(SHAPES) if args.shape == "both" else [args.shape]
    print(f"{args.envs} sub-envs on {cores} cores, {STEPS} vector steps, {args.rounds} rounds in turns")
    print("| env | library | in process | in processes | messages | parallelism | efficiency |")
    print("|---|---|---|---|---|---|---|")
    for shape in shapes:
        for name, (make, message_s) in LIBRARIES.items():
            alone, spread = [], []
            for _ in range(args.rounds):
                alone.append(vector_step_s(make, shape, False, args.envs))
                spread.append(vector_step_s(make, shape, True, args.envs))
            inside, outside = statistics.median(alone), statistics.median(spread)
            parallelism = inside / max(outside - args.envs * message_s, 1e-9)
            efficiency = parallelism / min(args.envs, cores)
            print(f"| {shape} | {name} | {inside * 1e3:.2f} ms | {outside * 1e3:.2f} ms | "
                  f"{args.envs * message_s * 1e3:.2f} ms | {parallelism:.2f} | {efficiency:.2f} |", flush=True)


if __name__ == "__main__":
    main()
