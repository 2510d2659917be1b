"""What the probes add per optimizer step and per DataLoader batch: a tiny model (or a bare
DataLoader) run for thousands of iterations under plain `python` and under `gpuprof run`, in pairs
that alternate which goes first; each run times its own loop (after a warm-up), so start-up and the
report are left out. The figure is the median over pairs of (gpuprof − plain) microseconds per
iteration, by the process's CPU time (gpuprof's threads in the job included) or by the wall clock.

    python bench/probe_cost.py                       # step and batch, 5 pairs of 6000 iterations
    python bench/probe_cost.py --pairs 9 --modes step,batch,both --clock wall
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
LOOP = os.path.join(HERE, "programs", "probe_cost_loop.py")
WHAT = {"step": "per optimizer step", "batch": "per DataLoader batch", "both": "per step fed by a DataLoader"}


def loop_times(argv, env, clock: str) -> dict:
    """Microseconds per iteration the loop reports for itself, by mode."""
    out = subprocess.run(argv, check=True, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, cwd=ROOT).stdout
    found = [json.loads(text) for text in out.splitlines() if text.startswith("{")]
    return {item["mode"]: item[f"{clock}_us"] for item in found}


def measure(modes=("step", "batch"), iterations: int = 6000, pairs: int = 5, clock: str = "cpu",
            python: str = sys.executable) -> dict:
    """Paired runs (each running every mode in turn): per mode, each pair's plain and profiled
    figure and the median of the differences (µs added per iteration)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    plain_times, profiled_times = [], []
    with tempfile.TemporaryDirectory() as out:
        plain = [python, LOOP, ",".join(modes), str(iterations)]
        for i in range(pairs):
            profiled = [python, "-m", "gpuprof", "run", "-q", "--no-live", "--out", os.path.join(out, str(i)),
                        "--python", python, LOOP, ",".join(modes), str(iterations)]
            first, second = (plain, profiled) if i % 2 == 0 else (profiled, plain)
            a, b = loop_times(first, env, clock), loop_times(second, env, clock)
            p, g = (a, b) if first is plain else (b, a)
            plain_times.append(p)
            profiled_times.append(g)
    results = {}
    for mode in modes:
        added = [g[mode] - p[mode] for p, g in zip(plain_times, profiled_times)]
        results[mode] = {"added_us": statistics.median(added), "added": added,
                         "plain_us": statistics.median(p[mode] for p in plain_times),
                         "profiled_us": statistics.median(g[mode] for g in profiled_times)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=6000)
    parser.add_argument("--modes", default="step,batch")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    print(f"{'mode':<6} {'plain µs':>9} {'gpuprof µs':>10} {'added µs':>9}  what; each pair's difference")
    for mode, r in measure(args.modes.split(","), args.iterations, args.pairs, args.clock).items():
        print(f"{mode:<6} {r['plain_us']:9.1f} {r['profiled_us']:10.1f} {r['added_us']:9.1f}  {WHAT[mode]}; "
              + " ".join(f"{d:.1f}" for d in r["added"]))


if __name__ == "__main__":
    main()
