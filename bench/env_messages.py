"""What stepping sub-environments in processes costs per sub-env step beyond the step itself: the
messages to and from each process (actions out, observations, rewards and infos back), measured
with an env whose own step is almost free (CartPole-v1; `--env` names another, such as Acrobot-v1,
whose step and observation differ).

Each vector env is stepped STEPS times after a warm-up, in process and in processes, with 1, 2 and
4 envs, ROUNDS times in turns; the figure per library is the median, over the env counts, of
(in processes - in process) / envs, each from its rounds' medians:

- Stable-Baselines3: DummyVecEnv against SubprocVecEnv (make_vec_env's vec_env_cls);
- gymnasium: SyncVectorEnv against AsyncVectorEnv (make_vec's vectorization_mode "sync" and "async").

The priors `subproc-vec-env.message-cost` and `async-vector-env.message-cost` (gpuprof/priors/
rollout_fixes.py) come from this script.

    python bench/env_messages.py [--rounds R] [--env ID]
"""

import argparse
import statistics
import time

STEPS, WARM_UP, ROUNDS = 3000, 200, 3
COUNTS = (1, 2, 4)
ENV = {"id": "CartPole-v1"}


def sb3(parallel: bool, n: int):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    return make_vec_env(ENV["id"], n_envs=n, seed=0, vec_env_cls=SubprocVecEnv if parallel else DummyVecEnv)


def gymnasium(parallel: bool, n: int):
    import gymnasium as gym
    envs = gym.make_vec(ENV["id"], num_envs=n, vectorization_mode="async" if parallel else "sync")
    envs.reset(seed=0)
    return envs


def per_step(make, parallel: bool, n: int) -> float:
    import numpy as np
    envs = make(parallel, n)
    if make is sb3:
        envs.reset()
    actions = np.zeros(n, dtype=np.int64)
    for _ in range(WARM_UP):
        envs.step(actions)
    started = time.perf_counter()
    for _ in range(STEPS):
        envs.step(actions)
    seconds = (time.perf_counter() - started) / STEPS
    envs.close()
    return seconds


def message_cost(make, rounds: int) -> float:
    per_env = []
    for n in COUNTS:
        alone, apart = [], []
        for _ in range(rounds):
            alone.append(per_step(make, False, n))
            apart.append(per_step(make, True, n))
        extra = (statistics.median(apart) - statistics.median(alone)) / n
        print(f"  {n} envs: in process {statistics.median(alone) * 1e6:.1f} µs, in processes "
              f"{statistics.median(apart) * 1e6:.1f} µs a vector step: {extra * 1e6:.1f} µs more per env")
        per_env.append(extra)
    return statistics.median(per_env)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--env", default=ENV["id"], help="the gymnasium env id stepped (default CartPole-v1)")
    args = parser.parse_args()
    ENV["id"] = args.env
    for name, make in (("stable-baselines3 SubprocVecEnv", sb3), ("gymnasium AsyncVectorEnv", gymnasium)):
        print(name)
        print(f"  message cost: {message_cost(make, args.rounds) * 1e6:.0f} µs per sub-env step")


if __name__ == "__main__":
    main()
