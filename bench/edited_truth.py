"""Estimates against the truth measured by editing the program: for each case, the program runs
plainly under `gpuprof run` (its report gives the fix's estimate and the step time), and a copy of
it with the fix made in its source runs the same way; rounds alternate the two, and each round's
ratio of step times is one measurement. Not `gpuprof try`: the change is the user's own edit.

    python bench/edited_truth.py [--rounds R] [CASE ...]

Prints one row per case (estimate or range, measured median and spread, estimate/measured, whether
the measured gain falls within the range, below it or above it) and the median and worst ratio."""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEPS = 30                      # measured steps per run (gpuprof run --steps)
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2"]


def loader_change(source: str, change: dict) -> str:
    """The DataLoader's keyword arguments set as `change` says (num_workers, persistent_workers) on
    the line that builds it, and torch.set_num_threads(N) first thing under `if __name__` (or after
    the imports)."""
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if "DataLoader(" not in line or line.lstrip().startswith(("from ", "import ", "#")):
            continue
        for key in ("num_workers", "persistent_workers"):
            if key not in change:
                continue
            if re.search(rf"\b{key}=", line):
                line = re.sub(rf"\b{key}=[^,)]+", f"{key}={change[key]}", line)
            else:
                line = re.sub(r"(DataLoader\((?:[^,()]|\([^()]*\))+), ", rf"\1, {key}={change[key]}, ", line, count=1)
        lines[i] = line
        break
    source = "".join(lines)
    if change.get("torch_threads"):
        return with_threads(source, change["torch_threads"])
    return source


def with_threads(source: str, threads: int) -> str:
    line = f"torch.set_num_threads({threads})"
    if 'if __name__ == "__main__":\n' in source:
        return source.replace('if __name__ == "__main__":\n', f'if __name__ == "__main__":\n    {line}\n', 1)
    return re.sub(r"^(import torch\n)", rf"\1{line}\n", source, count=1, flags=re.M)


def autocast(source: str, _change: dict) -> str:
    """The line that calls the model under torch.autocast('cpu', bfloat16)."""
    lines = source.splitlines(keepends=True)
    for i, text in enumerate(lines):
        if "model(x)" in text:
            indent = text[:len(text) - len(text.lstrip())]
            lines[i] = f"{indent}with torch.autocast('cpu', dtype=torch.bfloat16):\n    {text}"
            break
    return "".join(lines)


def replace(old: str, new: str):
    def edit(source: str, _change: dict) -> str:
        assert old in source, f"{old!r} not in the program"
        return source.replace(old, new, 1)
    return edit


#: name: (program, its arguments, torchrun or not, the fix whose estimate is checked, the edit)
CASES = {
    "num-workers, short steps": (os.path.join(ROOT, "examples", "short_steps_tabular.py"), [], False,
                                 "num-workers", loader_change),
    "num-workers, random augmentation": (os.path.join(ROOT, "tests", "programs", "random_augment.py"), [], False,
                                         "num-workers", loader_change),
    "cache-preprocessed": (os.path.join(HERE, "programs", "preprocess_heavy.py"), [], False, "cache-preprocessed",
                           replace("CACHE = False", "CACHE = True")),
    "training-threads": (os.path.join(ROOT, "examples", "contended_workers.py"), [], False, "training-threads",
                         loader_change),
    "ddp-no-sync, 8 micro-batches": (os.path.join(ROOT, "tests", "programs", "ddp_accumulate.py"), ["plain", "8", "60"],
                                     True, "ddp-no-sync",
                                     replace('mode = sys.argv[1] if len(sys.argv) > 1 else "plain"', 'mode = "nosync"')),
    "mixed-precision (CPU)": (os.path.join(ROOT, "examples", "compute_heavy.py"), [], False, "mixed-precision",
                              autocast),
}
#: Changes to make where the report offers no change of its own (the fix not offered, or a code change).
FALLBACK = {"num-workers": {"num_workers": 2, "persistent_workers": True}, "training-threads": {"torch_threads": 1}}


def run(program: str, args: list, torchrun: bool, folder: str, tag: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = os.path.join(folder, tag)
    command = (TORCHRUN if torchrun else [sys.executable]) + [program] + args
    limit = [] if torchrun else ["--steps", str(STEPS)]
    report = out + ".json"
    done = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", *limit, "--out", out, "--json", report,
                           "--", *command], env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=600)
    if done.returncode != 0 or not os.path.exists(report):
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}, no report"])[-1]}
    with open(report) as handle:
        return json.load(handle)


def step_time(report: dict):
    steps = report.get("steps") or {}
    if not steps.get("window_s") or not steps.get("measured"):
        return None
    return steps["window_s"] / steps["measured"]


def estimate_of(report: dict, fix_id: str):
    """(the advice item or None, (low, high) or None, the point estimate or prior or None)."""
    item = next((a for a in report.get("advice") or [] if a["id"] == fix_id), None)
    if item is None:
        return None, None, None
    span = item.get("estimate")
    span = (span["low"], span["high"]) if isinstance(span, dict) and span.get("low") is not None else None
    return item, span, item.get("estimated_speedup") or item.get("prior")


def measure_case(name: str, rounds: int, folder: str) -> dict:
    program, args, torchrun, fix_id, edit = CASES[name]
    with open(program) as handle:
        source = handle.read()
    times, edited_times, first = [], [], None
    edited_path = None
    for r in range(rounds):
        report = run(program, args, torchrun, folder, f"{fix_id}-{r}-plain")
        if "error" in report:
            return {"error": report["error"]}
        first = first or report
        if edited_path is None:
            item = estimate_of(report, fix_id)[0]
            change = (item or {}).get("change") or FALLBACK.get(fix_id) or {}
            case_dir = os.path.join(folder, f"edited-{fix_id}")
            os.makedirs(case_dir, exist_ok=True)
            edited_path = os.path.join(case_dir, os.path.basename(program))
            with open(edited_path, "w") as handle:
                handle.write(edit(source, change))
        edited = run(edited_path, args, torchrun, folder, f"{fix_id}-{r}-edited")
        if "error" in edited:
            return {"error": "edited copy: " + edited["error"]}
        times.append(step_time(report))
        edited_times.append(step_time(edited))
    ratios = sorted(a / b for a, b in zip(times, edited_times) if a and b)
    item, span, point = estimate_of(first, fix_id)
    return {"item": item, "span": span, "point": point, "ratios": ratios,
            "verdict": first["verdict"]["bottleneck"]}


def placed(measured: float, span) -> str:
    if span is None:
        return "-"
    low, high = span
    return "within" if low <= measured <= high else ("below" if measured < low else "above")


def main(argv: list) -> None:
    parser = argparse.ArgumentParser(prog="bench/edited_truth.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each the plain and the edited program")
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"cases to measure (all by default): {', '.join(CASES)}")
    args = parser.parse_args(argv)
    unknown = [name for name in args.cases if name not in CASES]
    if unknown:
        parser.error(f"not a case: {', '.join(unknown)}")
    print_table(args.cases or list(CASES), args.rounds)


def print_table(names, rounds: int) -> None:
    print("\n| case | verdict | fix | estimate | measured by editing (median; min-max) | estimate/measured | "
          "measured vs range |")
    print("|---|---|---|---|---|---|---|")
    quotients = []
    placements = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            got = measure_case(name, rounds, folder)
            fix_id = CASES[name][3]
            if "error" in got:
                print(f"| {name} | | {fix_id} | error: {got['error']} | | | |")
                continue
            ratios = got["ratios"]
            measured = statistics.median(ratios) if ratios else None
            spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if ratios else "-"
            item, span, point = got["item"], got["span"], got["point"]
            if item is None:
                shown = "not offered"
            elif item.get("estimated_speedup") is None:
                shown = f"not estimated (prior {point})" if point else "not estimated"
            else:
                shown = f"{span[0]:.2f}-{span[1]:.2f}x (mid {point:.2f})" if span else f"{point:.2f}x"
            quotient = point / measured if point and measured and item is not None else None
            if quotient is not None and item.get("estimated_speedup") is not None:
                quotients.append(quotient)
                placements.append(placed(measured, span))
            print(f"| {name} | {got['verdict']} | {fix_id} | {shown} | "
                  f"{f'{measured:.2f}x ({spread})' if measured else '-'} | "
                  f"{f'{quotient:.2f}' if quotient is not None else '-'} | "
                  f"{placed(measured, span) if measured and item is not None else '-'} |")
    if quotients:
        ordered = sorted(quotients)
        worst = max(quotients, key=lambda q: max(q, 1 / q))
        print(f"\nestimate/measured over {len(ordered)} estimated fixes: median {statistics.median(ordered):.2f}, "
              f"worst {worst:.2f}; measured within the range {placements.count('within')}, below "
              f"{placements.count('below')}, above {placements.count('above')}")


if __name__ == "__main__":
    main(sys.argv[1:])
