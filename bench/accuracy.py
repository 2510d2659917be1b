"""Run every example under gpuprof and print the expected against the found verdict and top fixes.

    python bench/accuracy.py [EXAMPLE ...]
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


def main() -> None:
    names = sys.argv[1:] or list(EXPECTED)
    passed = 0
    print("| example | expected | found | confidence | top fixes | check | result |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            want, check, check_text = EXPECTED[name]
            report = profile(name, folder)
            if "error" in report:
                print(f"| {name} | {want} | error: {report['error']} | | | {check_text} | FAIL |")
                continue
            verdict = report["verdict"]
            ids = [a["id"] for a in report["advice"]]
            ok = verdict["bottleneck"] == want and check(ids)
            passed += ok
            print(f"| {name} | {want} | {verdict['bottleneck']} ({verdict['share']:.0%} of step) | "
                  f"{verdict['confidence']:.2f} | {', '.join(ids[:3]) or '-'} | {check_text} | {'pass' if ok else 'FAIL'} |")
    print(f"\n{passed} passed, {len(names) - passed} failed")


if __name__ == "__main__":
    main()
