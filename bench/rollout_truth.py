"""Truth by intervention for a PPO rollout (tests/programs/ppo_rollout.py): what gpuprof estimates
against what changing the program measures.

- env stepping made free: the env's results are recorded once, then replayed by a vector env whose
  step only returns the next recorded result (the program converts and uses them as before);
- action sampling without argument checks (`validate_args=False`, part of `rollout-inference`).

Each variant runs ROUNDS times in turns with the plain program in fresh processes; the training
loop's own CPU time (a second train(), after a one-iteration warm-up; the program uses one thread,
and on a loaded shared machine its wall time mostly measures the wait for a core) is compared by
the median of each round's ratio to the plain run.

With `--env ID` (such as Acrobot-v1, whose step costs about three times CartPole's and whose
observation and actions differ) a copy of the program steps that env instead, line for line the same.

    python bench/rollout_truth.py [--rounds R] [--env ID]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from profiled import report_of

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(ROOT, "tests", "programs")
ROUNDS = 5
PROGRAM = {"folder": PROGRAMS}       # where ppo_rollout.py is read from: a copy stepping another env with --env

CHILD = r"""
import pickle, sys, time
sys.path.insert(0, sys.argv[3])
import gymnasium as gym
import torch
import ppo_rollout

mode, path = sys.argv[1], sys.argv[2]
recorded = pickle.load(open(path, "rb")) if mode == "replay" else []

class Recording(gym.vector.SyncVectorEnv):
    def step(self, actions):
        out = super().step(actions)
        recorded.append(out)
        return out

class Replayed(gym.vector.SyncVectorEnv):
    def step(self, actions):
        return recorded.pop(0) if len(recorded) > 1 else recorded[0]

if mode == "unchecked":
    torch.distributions.Distribution.set_default_validate_args(False)
vector = {"record": Recording, "replay": Replayed}.get(mode, gym.vector.SyncVectorEnv)
ppo_rollout.train(vector=vector, iterations=1)      # warm-up: torch's and gymnasium's first-call costs
start = time.process_time()
ppo_rollout.train(vector=vector)
print("seconds", time.process_time() - start)
if mode == "record":
    pickle.dump(recorded, open(path, "wb"))
"""


def timed(mode: str, path: str) -> float:
    done = subprocess.run([sys.executable, "-c", CHILD, mode, path, PROGRAM["folder"]], capture_output=True, text=True, timeout=300)
    line = next(x for x in done.stdout.splitlines() if x.startswith("seconds"))
    return float(line.split()[1])


def estimated() -> dict:
    """gpuprof's figures for the same program: env share, its bound, the phases and the top fix."""
    report = report_of([sys.executable, os.path.join(PROGRAM["folder"], "ppo_rollout.py")], timeout=300)
    environment = report["environment"]
    return {"env_share": environment["share"], "phases": environment.get("phases") or {},
            "advice": [(a["id"], a.get("estimate")) for a in report["advice"]]}


def print_table(rounds: int = ROUNDS) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "recorded.pkl")
        timed("record", path)
        replayed, unchecked = [], []
        for _ in range(rounds):
            base = timed("plain", path)
            replayed.append(base / timed("replay", path))
            unchecked.append(base / timed("unchecked", path))
    guess = estimated()
    share = guess["env_share"]
    parts = guess["phases"].get("parts") or {}
    print("| intervention | estimate | measured (median of %d) |" % rounds)
    print("|---|---|---|")
    print(f"| env stepping made free (replayed) | env {share:.1%} of the time: at most {1 / (1 - share):.2f}x | "
          f"{statistics.median(replayed):.2f}x |")
    inference = next((e for i, e in guess["advice"] if i == "rollout-inference"), None)
    print(f"| actions drawn without argument checks | part of rollout-inference "
          f"({inference['low']:.2f}-{inference['high']:.2f}x)" if inference else "| actions drawn without argument "
          "checks | rollout-inference not offered", end="")
    print(f" | {statistics.median(unchecked):.2f}x |")
    print(f"\nphases: {json.dumps(guess['phases'].get('collection'))} collection, parts {json.dumps(parts)}")


def stepping(env_id: str, folder: str) -> str:
    """A copy of the program in `folder` whose vector env steps env_id, every line where it was."""
    with open(os.path.join(PROGRAMS, "ppo_rollout.py")) as handle:
        source = handle.read()
    with open(os.path.join(folder, "ppo_rollout.py"), "w") as handle:
        handle.write(source.replace('make_env("CartPole-v1"', f'make_env("{env_id}"')
                     .replace("obs.reshape((-1, 4))", "obs.reshape((-1,) + envs.single_observation_space.shape)"))
    return folder


def main(argv: list) -> None:
    parser = argparse.ArgumentParser(prog="bench/rollout_truth.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds, each every variant and the plain program")
    parser.add_argument("--env", metavar="ID", help="a gymnasium env id the copy of the program steps instead of CartPole-v1")
    args = parser.parse_args(argv)
    if args.env:
        PROGRAM["folder"] = stepping(args.env, tempfile.mkdtemp())
    try:
        print_table(args.rounds)
    finally:
        if PROGRAM["folder"] != PROGRAMS:
            shutil.rmtree(PROGRAM["folder"], ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
