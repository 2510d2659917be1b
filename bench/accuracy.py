"""Run every example under gpuprof (three times: the verdict must be stable) and print the
expected against the found verdict and top fixes; then measure every fix `try` can apply (its
`--top`, with the input ceiling) and print each estimate against the measured speed-up with its
interval, and the median estimate error; then run the same `try` twice on a few examples and say
whether the two measurements' intervals overlap (try's own repeatability); last, each fix's
estimate against the truth measured by editing a copy of the program (bench/edited_truth.py).

    python bench/accuracy.py [--no-measure] [--runs N] [EXAMPLE ...]
    python bench/accuracy.py --edited-only [--rounds R]     (only the edited-program cases)
    python bench/accuracy.py --interventions-only          (only the truth-by-intervention cases)
    python bench/accuracy.py --corpus [--half held|calibrate|all] [NAME ...]
                                                           (the corpus's held half: bench/corpus_accuracy.py)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from expectations import EXPECTED  # noqa: E402
import edited_truth  # noqa: E402


def profile(example: str, folder: str) -> dict:
    os.makedirs(folder, exist_ok=True)
    report = os.path.join(folder, example + ".json")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", os.path.join(folder, example),
                           "--json", report, os.path.join(ROOT, "examples", example)],
                          env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    with open(report) as handle:
        data = json.load(handle)
    data["_seconds"] = time.perf_counter() - start
    return data


TOP = 5                 # fixes tried per example: every one try can apply, as far as the advice ranks them
REPEATED = ("cpu_starved.py", "short_steps_tabular.py", "remote_source.py")


def measure(example: str, folder: str, rounds: int = 3, ceiling: bool = True, tag: str = "") -> dict:
    """`gpuprof try --top TOP [--input-ceiling]` on one example: its try record (or an error)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "gpuprof", "try", "-q", "--top", str(TOP)]
                          + (["--input-ceiling"] if ceiling else [])
                          + ["--rounds", str(rounds), "--max-rounds", "6", "--budget", "300",
                             "--out", os.path.join(folder, f"try{tag}-" + example), "--json", "-",
                             os.path.join(ROOT, "examples", example)],
                          env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout)


def _span(row: dict) -> str:
    low = row.get("interval_low") if row.get("interval_low") is not None else row.get("speedup_min")
    high = row.get("interval_high") if row.get("interval_high") is not None else row.get("speedup_max")
    return f"{low:.2f}-{high:.2f}" if low is not None and high is not None else "-"


def estimate_table(names, folder, loaders) -> dict:
    """Estimated against measured: every fix try can apply, and the input ceiling."""
    print("\n| example | fix tried | estimate | measured (90% interval) | measured/estimate | ceiling est. | ceiling measured | rounds |")
    print("|---|---|---|---|---|---|---|---|")
    errors = []
    worst = 0.0
    records = {}
    for name in names:
        record = records[name] = measure(name, folder, ceiling=loaders.get(name, True))
        if "error" in record:
            if "nothing to try" in record["error"]:
                print(f"| {name} | none applicable (its fixes need a code change) | - | - | - | - | - | - |")
            else:
                print(f"| {name} | error: {record['error']} | | | | | | |")
            continue
        rows = record["rows"][1:]
        ceiling = next((r for r in rows if (r["settings"] or {}).get("ceiling")), None)
        fixes = [r for r in rows if not (r["settings"] or {}).get("ceiling")]
        ceiling_text = (f"{ceiling['estimate']:.2f}x" if ceiling and ceiling.get("estimate") else "-",
                        f"{ceiling['speedup']:.2f}x" if ceiling and ceiling.get("speedup") else "-")
        rounds_run = (record.get("settings") or {}).get("rounds")
        if not any(f.get("speedup") for f in fixes):
            print(f"| {name} | none applicable | - | - | - | {ceiling_text[0]} | {ceiling_text[1]} | {rounds_run} |")
            continue
        for fix in fixes:
            if not fix.get("speedup"):
                continue
            ratio = fix["speedup"] / fix["estimate"] if fix.get("estimate") else None
            if ratio is not None:
                errors.append(abs(ratio - 1))
                worst = max(worst, fix["estimate"] / fix["speedup"])
            print(f"| {name} | {fix['fix'] or fix['label']} | {fix['estimate'] or '-'} | {fix['speedup']:.2f}x "
                  f"({_span(fix)}) | {f'{ratio:.2f}' if ratio else '-'} | "
                  f"{ceiling_text[0]} | {ceiling_text[1]} | {rounds_run} |")
    if errors:
        errors.sort()
        print(f"\nmedian |measured/estimate - 1| = {errors[len(errors) // 2]:.2f} over {len(errors)} fixes; "
              f"largest estimate/measured = {worst:.2f}")
    return records


def repeatability(names, folder, loaders, first: dict) -> None:
    """The same `try` again on a few examples: do the two measurements' intervals overlap?"""
    print("\n| example | variant | first try | second try | overlap |")
    print("|---|---|---|---|---|")
    for name in [n for n in REPEATED if n in names]:
        again = measure(name, folder, ceiling=loaders.get(name, True), tag="-again")
        before = first.get(name) or {}
        if "error" in again or "error" in before:
            print(f"| {name} | error: {again.get('error') or before.get('error')} | | | |")
            continue
        earlier = {r["label"]: r for r in before["rows"][1:]}
        for row in again["rows"][1:]:
            old = earlier.get(row["label"])
            if not old or not old.get("speedup") or not row.get("speedup"):
                continue
            a = (old.get("interval_low") or old["speedup"], old.get("interval_high") or old["speedup"])
            b = (row.get("interval_low") or row["speedup"], row.get("interval_high") or row["speedup"])
            overlap = not (a[0] > b[1] or b[0] > a[1])
            print(f"| {name} | {row['label']} | {old['speedup']:.2f}x ({_span(old)}) | {row['speedup']:.2f}x "
                  f"({_span(row)}) | {'yes' if overlap else 'NO'} |")


def rollout_truth(rounds: int = 3) -> None:
    """A PPO rollout's env stepping made free by replaying recorded env results, and its action
    sampling unchecked: estimate against measured (bench/rollout_truth.py)."""
    import rollout_truth as truth
    truth.print_table(rounds)


#: Truth by intervention: (example, its flag that makes the change, what the report's estimate is
#: read from). `--replay 8` makes the input free (its first 8 batches replayed from memory);
#: `--draft` decodes the JPEGs in draft mode, as the decode-reduced-size fix says.
INTERVENTIONS = [
    ("photo_decode.py", ["--replay", "8"], "input made free"),
    ("photo_decode.py", ["--draft"], "decode-reduced-size"),
]


def _run_with(example: str, args: list, folder: str) -> dict:
    """`gpuprof run` on the example with its own arguments: the report (or an error)."""
    os.makedirs(folder, exist_ok=True)
    report = os.path.join(folder, "report.json")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", os.path.join(folder, "run"),
                           "--json", report, os.path.join(ROOT, "examples", example)] + args,
                          env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    with open(report) as handle:
        return json.load(handle)


def _intervention_estimate(report: dict, what: str):
    """(low, high) the plain run's report gives for the change, or None."""
    verdict = report.get("verdict") or {}
    evidence = verdict.get("evidence") or {}
    if what == "input made free":
        if evidence.get("input_free_low") is not None:
            return evidence["input_free_low"], evidence["input_free_high"]
        if (verdict.get("bottleneck") or "").startswith("input.") and verdict.get("share"):
            free = 1 / max(1 - verdict["share"], 1e-9)
            return free, free
        return None
    item = next((a for a in report.get("advice") or [] if a["id"] == what), None)
    estimate = (item or {}).get("estimate") or {}
    return (estimate["low"], estimate["high"]) if estimate else None


def intervention_table(rounds: int = 3) -> None:
    """Each intervention against the plain program, rounds alternating the two: the estimate the
    plain run's report gives, the measured ratio of median step times, and whether it falls in range."""
    print("\n| example | intervention | estimate | measured (median of rounds; min-max) | in range |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for example, args, what in INTERVENTIONS:
            ratios, estimates = [], []
            for r in range(rounds):
                plain = _run_with(example, [], os.path.join(folder, f"{example}-{r}-plain"))
                changed = _run_with(example, args, os.path.join(folder, f"{example}-{r}-{args[0]}"))
                if "error" in plain or "error" in changed:
                    print(f"| {example} | {what} | error: {plain.get('error') or changed.get('error')} | | |")
                    break
                estimates.append(_intervention_estimate(plain, what))
                ratios.append(plain["steps"]["median_step_s"] / changed["steps"]["median_step_s"])
            if not ratios:
                continue
            ratios.sort()
            measured = ratios[len(ratios) // 2]
            found = [e for e in estimates if e]
            low, high = (min(e[0] for e in found), max(e[1] for e in found)) if found else (None, None)
            verdict = "-" if low is None else ("yes" if low <= measured <= high else ("below" if measured < low else "above"))
            shown = f"{low:.2f}-{high:.2f}x" if low is not None else "not offered"
            print(f"| {example} | {what} | {shown} | {measured:.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f}) | {verdict} |")


def parse(argv: list) -> argparse.Namespace:
    """The bench's options; a name that is not an example (or, with --corpus, not a corpus program)
    is refused with exit 2 before anything runs."""
    parser = argparse.ArgumentParser(prog="bench/accuracy.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--corpus", action="store_true", help="the corpus's programs (bench/corpus_accuracy.py)")
    mode.add_argument("--edited-only", action="store_true", help="only the edited-program cases")
    mode.add_argument("--interventions-only", action="store_true", help="only the truth-by-intervention cases")
    parser.add_argument("--no-measure", action="store_true", help="the verdict table alone (no try, no truths)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each example (a verdict must hold in all)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each edited case (--edited-only)")
    parser.add_argument("--half", choices=("held", "calibrate", "all"), default="held",
                        help="which half of the corpus (--corpus)")
    parser.add_argument("--keep", metavar="FOLDER", help="keep the corpus's runs in FOLDER (--corpus)")
    parser.add_argument("--from", dest="kept", metavar="FOLDER",
                        help="analyse the runs kept in FOLDER again instead of profiling (--corpus)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="examples (or corpus programs, or edited cases)")
    args = parser.parse_args(argv)
    if args.corpus:
        import corpus_accuracy
        split = corpus_accuracy.load_split()
        known = split.get("held", []) + split.get("calibrate", [])
    elif args.edited_only:
        known = list(edited_truth.CASES)
    else:
        known = list(EXPECTED)
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"not known: {', '.join(unknown)} (known: {', '.join(known)})")
    return args


def main(argv: list) -> None:
    args = parse(argv)
    if args.corpus:
        import corpus_accuracy
        corpus_accuracy.main(args.half, args.names, keep=args.keep, kept=args.kept)
        return
    if args.interventions_only:
        intervention_table()
        return
    if args.edited_only:
        edited_truth.print_table(args.names or list(edited_truth.CASES), args.rounds)
        return
    measure_fixes = not args.no_measure
    runs = args.runs
    names = args.names or list(EXPECTED)
    passed = 0
    loaders = {}
    print(f"| example | expected | found in {runs} runs | confidence | top fixes | check | result |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            want, check, check_text = EXPECTED[name]
            found, confidences, oks, ids = [], [], [], []
            for run in range(runs):
                report = profile(name, os.path.join(folder, f"run{run}"))
                if "error" in report:
                    found.append(f"error: {report['error']}")
                    oks.append(False)
                    continue
                loaders[name] = bool(report.get("dataloaders"))
                verdict = report["verdict"]
                ids = [a["id"] for a in report["advice"]]
                found.append(f"{verdict['bottleneck']} ({verdict['share']:.0%})")
                confidences.append(verdict["confidence"])
                oks.append(verdict["bottleneck"] in want.split("|") and check(ids))
            ok = all(oks)
            passed += ok
            print(f"| {name} | {want} | {'; '.join(found)} | {min(confidences, default=0):.2f} | "
                  f"{', '.join(ids[:3]) or '-'} | {check_text} | {'pass' if ok else f'FAIL ({sum(oks)}/{runs})'} |")
        print(f"\n{passed} passed, {len(names) - passed} failed (each must pass in all {runs} runs)")
        if measure_fixes:
            records = estimate_table(names, folder, loaders)
            repeatability(names, folder, loaders, records)
            edited_truth.print_table(list(edited_truth.CASES), rounds=3)
            intervention_table()
            rollout_truth()


if __name__ == "__main__":
    main(sys.argv[1:])
