"""What `gpuprof attach` costs the job it reads: the same job timed from its first epoch to its end,
left alone and with gpuprof attached for all of that time; paired runs, alternating which goes
first, the median of the per-pair ratios (attached over alone).

    python bench/attach_overhead.py                 # input-bound, compute-bound and spawn workers, 3 pairs
    python bench/attach_overhead.py --pairs 5 --mode spawn --epochs 8
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.path.join(ROOT, "tests", "programs", "attach_target.py")


def after_first_epoch(mode: str, epochs: int, attach: bool, out: str) -> float:
    """Seconds from the job's first epoch line to its end; with `attach`, gpuprof samples all of it."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    job = subprocess.Popen([sys.executable, TARGET, mode, str(epochs)], stdout=subprocess.PIPE, text=True, cwd=out)
    job.stdout.readline()
    start = time.perf_counter()
    watcher = None
    if attach:
        watcher = subprocess.Popen([sys.executable, "-m", "gpuprof", "attach", str(job.pid), "--duration", "600",
                                    "-q", "--no-gpu", "--out", os.path.join(out, "attach")],
                                   env=env, cwd=out, stderr=subprocess.DEVNULL)
    job.stdout.read()
    job.wait()
    elapsed = time.perf_counter() - start
    if watcher is not None:
        watcher.wait(timeout=120)
    return elapsed


def measure(mode: str, epochs: int, pairs: int) -> dict:
    ratios = []
    with tempfile.TemporaryDirectory() as out:
        after_first_epoch(mode, epochs, False, out)          # warm the page cache once
        for i in range(pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            times = {flag: after_first_epoch(mode, epochs, flag, out) for flag in order}
            ratios.append(times[True] / times[False])
    return {"mode": mode, "ratios": [round(r, 3) for r in ratios], "median": round(statistics.median(ratios), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--mode", action="append", choices=["input", "compute", "spawn"])
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    for mode in args.mode or ["input", "compute", "spawn"]:
        result = measure(mode, args.epochs, args.pairs)
        print(f"{mode:8s} attached/alone median {result['median']:.3f}  pairs {result['ratios']}", flush=True)


if __name__ == "__main__":
    main()
