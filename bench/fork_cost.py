"""What gpuprof adds to `os.fork()`: a loop of forks whose children leave at once, timed inside the
program, under plain python and under `gpuprof run`, in alternating pairs; medians of each side and of
the per-pair ratios, in wall time and in CPU time (the program's and its children's: steadier than
wall time on a busy machine).

    python bench/fork_cost.py [--forks 200] [--pairs 7]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fork_loop(forks: int) -> tuple:
    """(wall s, CPU s) for `forks` fork + immediate child exit + wait, as a job would see them."""
    start, start_cpu = time.perf_counter(), cpu_seconds()
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    return time.perf_counter() - start, cpu_seconds() - start_cpu


def timed(command: list) -> tuple:
    # From ROOT: `python -m gpuprof` then takes this checkout's gpuprof, whatever the caller's folder.
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    wall, cpu = out.split()[-2:]
    return float(wall), float(cpu)


def one_pair(forks: int, gpuprof_first: bool) -> tuple:
    """((wall, cpu) plain, (wall, cpu) under gpuprof)."""
    me = [os.path.abspath(__file__), "--child", str(forks)]
    with tempfile.TemporaryDirectory() as tmp:
        plain = [sys.executable, *me]
        probed = [sys.executable, "-m", "gpuprof", "run", "-q", "--out", tmp, "--", sys.executable, *me]
        if gpuprof_first:
            with_gpuprof = timed(probed)
            without = timed(plain)
        else:
            without = timed(plain)
            with_gpuprof = timed(probed)
    return without, with_gpuprof


def summary(name: str, pairs: list, index: int, forks: int) -> str:
    plain_ms = statistics.median(p[index] for p, _ in pairs) * 1000 / forks
    probed_ms = statistics.median(g[index] for _, g in pairs) * 1000 / forks
    ratios = [g[index] / p[index] for p, g in pairs]
    return (f"{name}: plain {plain_ms:.3f} ms/fork, gpuprof {probed_ms:.3f} ms/fork, added "
            f"{probed_ms - plain_ms:.3f} ms/fork, median ratio {statistics.median(ratios):.3f} "
            f"(ratios {' '.join(f'{r:.3f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--forks", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        wall, cpu = fork_loop(args.child)
        print(f"{wall:.6f} {cpu:.6f}")
        return
    os.environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    pairs = [one_pair(args.forks, i % 2 == 1) for i in range(args.pairs)]
    print(f"{args.forks} forks, {args.pairs} pairs")
    print(summary("wall", pairs, 0, args.forks))
    print(summary("cpu ", pairs, 1, args.forks))

if __name__ == "__main__":
    main()
