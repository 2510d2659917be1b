"""The supervisor's own CPU cost: CPU seconds gpuprof uses per second of run, at the default
interval, while it samples a process tree of 1 + 4 workers. Target: under 2% of one core.

    python bench/sampler_cost.py [--seconds 10] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def one_run(seconds: float, interval: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", tmp, "--interval", str(interval),
                        os.path.join(HERE, "programs", "tree_of_five.py"), str(seconds)],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "run.json")) as handle:
            run = json.load(handle)
        with open(os.path.join(tmp, "report.json")) as handle:
            report = json.load(handle)
    return {"cpu_share": run["supervisor_cpu_s"] / run["duration_s"], "samples": report["system"]["samples"],
            "processes": report["system"]["job"]["processes_max"], "duration_s": run["duration_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    runs = [one_run(args.seconds, args.interval) for _ in range(args.repeats)]
    share = statistics.median(r["cpu_share"] for r in runs)
    print(f"sampler cost at {args.interval * 1000:.0f} ms, tree of {runs[0]['processes']} processes, "
          f"{args.seconds:.0f} s runs x {args.repeats}:")
    for r in runs:
        print(f"  {r['cpu_share'] * 100:.2f}% of one core ({r['samples']} samples in {r['duration_s']:.1f} s)")
    print(f"median: {share * 100:.2f}% of one core (target < 2%)")


if __name__ == "__main__":
    main()
