"""Truth by intervention for subproc-vec-env: tests/programs/sb3_ppo_render.py (SB3's PPO on 4
rendering envs) with SB3's DummyVecEnv against the same program with --vec-env subproc, and the
estimate gpuprof gives for that change from a profiled run of the first.

Each variant runs ROUNDS times in turns, as plain programs in fresh processes; the figure is the
median of each variant's learning steps per second (the program prints them), and beside each run
the cores the rest of the machine kept busy in the second before it (from /proc/stat), since a
shared machine's other load decides what parallel processes can gain.

    python bench/sb3_subproc_truth.py [--rounds R] [--profile]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from profiled import report_of

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAM = os.path.join(ROOT, "tests", "programs", "sb3_ppo_render.py")
ROUNDS = 3


def machine_busy():
    """(busy ticks, all ticks) of every core, from /proc/stat's first line."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def others_now(seconds: float = 1.0) -> float:
    """The cores the machine kept busy over the next `seconds` (nothing of the benchmark runs then)."""
    before_busy, before_all = machine_busy()
    time.sleep(seconds)
    busy, every = machine_busy()
    return round((busy - before_busy) / max(every - before_all, 1) * (os.cpu_count() or 1), 2)


def run(vec_env: str, extra=()) -> dict:
    others = others_now()
    got = subprocess.run([sys.executable, PROGRAM, "--vec-env", vec_env, *extra], capture_output=True, text=True,
                         timeout=600, check=True)
    rate = float(re.search(r"([\d.]+) steps/s", got.stdout).group(1))
    return {"steps_per_s": rate, "others_cores_before": others}


def estimate() -> dict:
    """gpuprof's subproc-vec-env estimate from a profiled run of the DummyVecEnv program."""
    report = report_of([sys.executable, PROGRAM])
    advice = {a["id"]: a for a in report["advice"]}
    fix = advice.get("subproc-vec-env")
    return {"verdict": report["verdict"]["bottleneck"], "env_share": report["environment"]["share"],
            "others": (report["system"].get("others") or {}).get("other_cores"),
            "estimate": fix and {"mid": fix["estimated_speedup"], **fix["estimate"]}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--profile", action="store_true", help="also profile the DummyVecEnv run for the estimate")
    args = parser.parse_args()
    runs = {"dummy": [], "subproc": []}
    for round_ in range(args.rounds):
        for variant in runs:
            runs[variant].append(run(variant))
            print(f"round {round_ + 1} {variant}: {runs[variant][-1]}", flush=True)
    medians = {v: statistics.median(r["steps_per_s"] for r in runs[v]) for v in runs}
    print(f"median steps/s: DummyVecEnv {medians['dummy']:.0f}, SubprocVecEnv {medians['subproc']:.0f}: "
          f"measured {medians['subproc'] / medians['dummy']:.2f}x")
    if args.profile:
        print("gpuprof:", estimate())


if __name__ == "__main__":
    main()
