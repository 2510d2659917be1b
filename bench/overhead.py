"""Wall-time overhead of `gpuprof run` over plain `python` on the same program: paired runs,
alternating which goes first, median of the per-pair ratios.

    python bench/overhead.py                      # the standard programs, 5 pairs each
    python bench/overhead.py --pairs 7 --program bench/programs/fast_loop.py:1500
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROGRAMS = [
    # name, script (relative to the project root), arguments
    ("fast loop (~300 steps/s)", "bench/programs/fast_loop.py", ["3000", "256"]),
    ("fast loop (~650 steps/s)", "bench/programs/fast_loop.py", ["6000", "32"]),
    ("input-bound", "examples/cpu_starved.py", []),
    ("compute-bound", "examples/compute_heavy.py", []),
]


def timed(argv, env) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def supervisor_share(out: str) -> list:
    shares = []
    for root, _, files in os.walk(out):
        if "run.json" in files:
            with open(os.path.join(root, "run.json")) as handle:
                run = json.load(handle)
            if run.get("duration_s"):
                shares.append(run["supervisor_cpu_s"] / run["duration_s"])
    return shares


def help_time(env, repeats: int = 5) -> float:
    times = [timed([sys.executable, "-m", "gpuprof", "--help"], env) for _ in range(repeats)]
    return statistics.median(times)


def measure(script: str, args, pairs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ratios, plain_times, profiled_times = [], [], []
    with tempfile.TemporaryDirectory() as out:
        plain = [sys.executable, script, *args]
        profiled = [sys.executable, "-m", "gpuprof", "run", "-q", "--out", out, script, *args]
        timed(plain, env)  # warm the page cache and torch's lazy files once
        for i in range(pairs):
            if i % 2 == 0:
                p, g = timed(plain, env), timed(profiled, env)
            else:
                g, p = timed(profiled, env), timed(plain, env)
            plain_times.append(p)
            profiled_times.append(g)
            ratios.append(g / p)
        shares = supervisor_share(out)
    return {"ratio": statistics.median(ratios), "ratios": ratios, "supervisor": statistics.median(shares) if shares else None,
            "plain_s": statistics.median(plain_times), "profiled_s": statistics.median(profiled_times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--program", action="append", help="SCRIPT[:ARG,ARG] instead of the standard set")
    args = parser.parse_args()
    programs = PROGRAMS
    if args.program:
        programs = []
        for spec in args.program:
            script, _, rest = spec.partition(":")
            programs.append((script, script, [a for a in rest.split(",") if a]))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "gpuprof")],
                   stdout=subprocess.DEVNULL, check=False)   # as an installed package would have
    print(f"gpuprof --help: {help_time(env):.3f} s (median of 5)")
    print(f"{'program':<28} {'plain s':>8} {'gpuprof s':>9} {'median ratio':>12} {'supervisor CPU':>14}  pairs")
    for name, script, prog_args in programs:
        if not os.path.exists(os.path.join(ROOT, script)):
            print(f"{name:<28} (missing {script})")
            continue
        result = measure(script, prog_args, args.pairs)
        share = f"{result['supervisor'] * 100:.2f}%" if result["supervisor"] is not None else "n/a"
        print(f"{name:<28} {result['plain_s']:8.2f} {result['profiled_s']:9.2f} {result['ratio']:12.3f} {share:>14}  "
              + " ".join(f"{r:.3f}" for r in result["ratios"]))


if __name__ == "__main__":
    main()
