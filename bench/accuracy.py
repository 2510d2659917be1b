"""Run every example under gpuprof and print the expected against the found verdict and top fixes;
then measure the top fix that needs no code change with `gpuprof try` (3 rounds against a baseline)
and print its estimate against the measured speed-up, and the median estimate error.

    python bench/accuracy.py [--no-measure] [EXAMPLE ...]
"""

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


def profile(example: str, folder: str) -> dict:
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


def measure(example: str, folder: str, rounds: int = 3, ceiling: bool = True) -> dict:
    """`gpuprof try --top 2 [--input-ceiling]` on one example: its try record (or an error)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "gpuprof", "try", "-q", "--top", "2"]
                          + (["--input-ceiling"] if ceiling else []) + ["--rounds", str(rounds), "--out", os.path.join(folder, "try-" + example), "--json", "-",
                           os.path.join(ROOT, "examples", example)],
                          env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout)


def estimate_table(names, folder, loaders) -> None:
    """Estimated against measured: the top two fixes try can apply, and the input ceiling."""
    print("\n| example | fix tried | estimate | measured (min-max) | measured/estimate | ceiling est. | ceiling measured |")
    print("|---|---|---|---|---|---|---|")
    errors = []
    worst = 0.0
    for name in names:
        record = measure(name, folder, ceiling=loaders.get(name, True))
        if "error" in record:
            if "nothing to try" in record["error"]:
                print(f"| {name} | none applicable (its fixes need a code change) | - | - | - | - | - |")
            else:
                print(f"| {name} | error: {record['error']} | | | | | |")
            continue
        rows = record["rows"][1:]
        ceiling = next((r for r in rows if (r["settings"] or {}).get("ceiling")), None)
        fixes = [r for r in rows if not (r["settings"] or {}).get("ceiling")]
        ceiling_text = (f"{ceiling['estimate']:.2f}x" if ceiling and ceiling.get("estimate") else "-",
                        f"{ceiling['speedup']:.2f}x" if ceiling and ceiling.get("speedup") else "-")
        if not any(f.get("speedup") for f in fixes):
            print(f"| {name} | none applicable | - | - | - | {ceiling_text[0]} | {ceiling_text[1]} |")
            continue
        for fix in fixes:
            if not fix.get("speedup"):
                continue
            ratio = fix["speedup"] / fix["estimate"] if fix.get("estimate") else None
            if ratio is not None:
                errors.append(abs(ratio - 1))
                worst = max(worst, fix["estimate"] / fix["speedup"])
            print(f"| {name} | {fix['fix'] or fix['label']} | {fix['estimate'] or '-'} | {fix['speedup']:.2f}x "
                  f"({fix['speedup_min']:.2f}-{fix['speedup_max']:.2f}) | {f'{ratio:.2f}' if ratio else '-'} | "
                  f"{ceiling_text[0]} | {ceiling_text[1]} |")
    if errors:
        errors.sort()
        print(f"\nmedian |measured/estimate - 1| = {errors[len(errors) // 2]:.2f} over {len(errors)} fixes; "
              f"largest estimate/measured = {worst:.2f}")


def main() -> None:
    args = sys.argv[1:]
    measure_fixes = "--no-measure" not in args
    names = [a for a in args if a != "--no-measure"] or list(EXPECTED)
    passed = 0
    loaders = {}
    print("| example | expected | found | confidence | top fixes | check | result |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            want, check, check_text = EXPECTED[name]
            report = profile(name, folder)
            if "error" in report:
                print(f"| {name} | {want} | error: {report['error']} | | | {check_text} | FAIL |")
                continue
            loaders[name] = bool(report.get("dataloaders"))
            verdict = report["verdict"]
            ids = [a["id"] for a in report["advice"]]
            ok = verdict["bottleneck"] in want.split("|") and check(ids)
            passed += ok
            print(f"| {name} | {want} | {verdict['bottleneck']} ({verdict['share']:.0%} of step) | "
                  f"{verdict['confidence']:.2f} | {', '.join(ids[:3]) or '-'} | {check_text} | {'pass' if ok else 'FAIL'} |")
        print(f"\n{passed} passed, {len(names) - passed} failed")
        if measure_fixes:
            estimate_table(names, folder, loaders)


if __name__ == "__main__":
    main()
