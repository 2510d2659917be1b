"""Whether env stepping's share holds beside other work: a reinforcement-learning program profiled
on a quiet machine and beside a process spinning on one core, in turns, ROUNDS times each.

On a busy machine gpuprof reads each rollout part and the update at the pace of their fastest calls
(the prior `input.env.uncontended-quantile`, gpuprof/priors/verdicts.py), so that another process's
fight with torch's threads does not shrink env stepping's share. This script checks that prior on a
program: the share and the verdict beside the spinner against the quiet ones.

    python bench/busy_env_share.py [--rounds R] [--program PATH] [--threads N]
"""

import argparse
import os
import statistics
import subprocess
import sys

from profiled import ROOT, report_of
PROGRAM = os.path.join(ROOT, "tests", "programs", "ppo_rollout.py")
ROUNDS = 3
SPIN = "while True:\n    pass\n"


def profiled(program: str, threads: str, busy: bool) -> dict:
    spinner = subprocess.Popen([sys.executable, "-c", SPIN]) if busy else None
    try:
        report = report_of([sys.executable, program], env={"OMP_NUM_THREADS": threads} if threads else None)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    environment = report.get("environment") or {}
    return {"share": environment.get("share"), "verdict": report["verdict"]["bottleneck"],
            "load": ((report.get("system") or {}).get("others") or {}).get("other_cores")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--program", default=PROGRAM)
    parser.add_argument("--threads", default="", help="OMP_NUM_THREADS for the program (default: unset)")
    args = parser.parse_args()
    seen = {False: [], True: []}
    for _ in range(args.rounds):
        for busy in (False, True):
            got = profiled(args.program, args.threads, busy)
            seen[busy].append(got)
            print(f"{'beside a spinner' if busy else 'quiet':>16}: env {got['share']:.1%}, verdict {got['verdict']}, "
                  f"others' cores {got['load']}", flush=True)
    for busy, runs in seen.items():
        print(f"{'beside a spinner' if busy else 'quiet'}: median env share "
              f"{statistics.median(r['share'] for r in runs):.1%}")


if __name__ == "__main__":
    main()
