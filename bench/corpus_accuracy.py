"""gpuprof's verdicts and estimates against the corpus's measured truths, on its held-out half.

bench/corpus/split.json fixes which programs calibrate and which are held out: a program's half is
decided by its name's hash (`half_of`), written into the file when the program joins, and nothing is
tuned on the held half. For each held program gpuprof runs once (the estimates of today's code) and
its report is scored against the program's truth.json (bench/corpus_truth.py: each fix made by
hand and measured):

- label right: the verdict is one the case names;
- top fix inside its range: the first fix's measured gain lies within its estimate's range;
- best measured fix first: the fix that measured the largest gain is the one ranked first;
- |log(estimate/measured)|: over every offered fix with an estimate and a truth, the median;
- a fix measured at 2x or more that is not offered at all.

    python bench/accuracy.py --corpus [--half held|calibrate|all] [--keep DIR | --from DIR] [NAME ...]

--keep DIR keeps each program's run folder and report (DIR/NAME.json) for a later look; --from DIR
scores run folders kept that way again, analysed by today's code (`gpuprof report`: analysis is
pure, so advice changes need no new run).

The scoring functions are pure (tests/unit/test_corpus.py)."""

import contextlib
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "corpus")
MIN_GAIN = 1.05          # a measured gain below this is no gain (gpuprof.advise.fix.MIN_GAIN)
BIG_GAIN = 2.0           # a fix measured at this or more must be offered


def half_of(name: str) -> str:
    """The half a program joins, from its name alone: no choice a result could sway."""
    return "held" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 2 else "calibrate"


def load_split() -> dict:
    with open(os.path.join(CORPUS, "split.json")) as handle:
        return json.load(handle)


def read_json(*parts):
    path = os.path.join(CORPUS, *parts)
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


#: Fixes whose gain turns on the CPU's instructions: bf16 autocast is fast only with bf16 ones
#: (gpuprof.advise.model_terms.CPU_BF16), and slower than float32 without them.
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
NEEDS_BF16 = ("mixed-precision",)


def truths(truth: dict) -> dict:
    """{fix id: measured median} for the fixes whose measurement succeeded."""
    return {k: v["median"] for k, v in ((truth or {}).get("fixes") or {}).items() if v.get("median")}


def foreign_truths(report: dict, truth: dict) -> list:
    """The fixes whose truth was measured on a CPU unlike the run's: a bf16 gain measured with bf16
    instructions says nothing where the CPU has none (and the other way). Unknown when the truth does
    not say (an older truth.json): then every truth counts. A fix measured in a later sitting carries
    its own `cpu_bf16`."""
    here = any(flag in ((report.get("system") or {}).get("cpu_flags") or ()) for flag in BF16_FLAGS)
    fixes = (truth or {}).get("fixes") or {}
    recorded = {k: fixes[k].get("cpu_bf16", (truth or {}).get("cpu_bf16")) for k in NEEDS_BF16 if k in truths(truth)}
    return [k for k, had in recorded.items() if had is not None and had != here]


def score(case: dict, report: dict, truth: dict) -> dict:
    """One program's scores: each is True, False or None (cannot be judged: no truth for it)."""
    foreign = foreign_truths(report, truth)
    measured = {k: v for k, v in truths(truth).items() if k not in foreign}
    advice = report.get("advice") or []
    ids = [a["id"] for a in advice]
    label = report["verdict"]["bottleneck"] in case["label"].split("|")
    top = advice[0] if advice else None
    in_range = None
    if top is not None and top["id"] in measured:
        span = top.get("estimate") or {}
        in_range = span.get("low") is not None and span["low"] <= measured[top["id"]] <= span["high"]
    best_first = None
    if measured:
        best_id = max(measured, key=measured.get)
        if measured[best_id] < MIN_GAIN:
            best_first = top is None or measured.get(top["id"], 1.0) >= measured[best_id] / MIN_GAIN
        else:
            best_first = top is not None and measured.get(top["id"], 0.0) >= measured[best_id] / MIN_GAIN
    errors = [abs(math.log(a["estimated_speedup"] / measured[a["id"]])) for a in advice
              if a.get("estimated_speedup") and a["id"] in measured]
    missed = sorted(k for k, v in measured.items() if v >= BIG_GAIN and k not in ids)
    return {"label": label, "top_in_range": in_range, "best_first": best_first, "log_errors": errors,
            "missed_big": missed, "verdict": report["verdict"]["bottleneck"], "ids": ids, "measured": measured,
            "foreign": foreign}


def summary(scores: dict) -> list:
    """The held half's figures, each as x of y (programs that could be judged)."""
    def tally(key):
        judged = [s[key] for s in scores.values() if s[key] is not None]
        return f"{sum(judged)} of {len(judged)}"
    errors = [e for s in scores.values() for e in s["log_errors"]]
    missed = [f"{name}: {', '.join(s['missed_big'])}" for name, s in scores.items() if s["missed_big"]]
    foreign = [f"{name}: {', '.join(s['foreign'])}" for name, s in scores.items() if s.get("foreign")]
    return [f"label right: {tally('label')}",
            f"top fix's measured gain inside its range: {tally('top_in_range')}",
            f"best measured fix ranked first: {tally('best_first')}",
            f"median |log(estimate/measured)|: {statistics.median(errors):.2f} over {len(errors)} fixes" if errors
            else "median |log(estimate/measured)|: no fix with both",
            f"fixes measured at {BIG_GAIN:.0f}x or more left unoffered: {len(missed)}" + (f" ({'; '.join(missed)})" if missed else "")] \
        + ([f"truths not judged (measured on a CPU unlike this one): {'; '.join(foreign)}"] if foreign else [])


def profile(name: str, case: dict, folder: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    report = os.path.join(folder, name + ".json")
    program = os.path.join(CORPUS, name, "train.py")
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2"] \
        if case.get("torchrun") else [sys.executable]
    done = subprocess.run([sys.executable, "-m", "gpuprof", "run", "-q", "--out", os.path.join(folder, name),
                           "--json", report, "--", *launcher, program, *(case.get("args") or [])],
                          env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=900)
    if done.returncode != 0 or not os.path.exists(report):
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    with open(report) as handle:
        return json.load(handle)


def reanalysed(name: str, folder: str) -> dict:
    """The report of a kept run folder, analysed again by today's code."""
    done = subprocess.run([sys.executable, "-m", "gpuprof", "report", "-f", "json", os.path.join(folder, name)],
                          env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout)


def main(half: str = "held", chosen: list | None = None, keep: str | None = None, kept: str | None = None) -> None:
    """Print the table and the summary for `chosen` (or the half's programs); `keep` keeps the runs in
    that folder, `kept` analyses the runs kept there again instead of profiling."""
    split = load_split()
    names = chosen or (split["held"] + split["calibrate"] if half == "all" else split[half])
    print("| program | shape | label | found | top fixes | measured truths | top in range | best first |")
    print("|---|---|---|---|---|---|---|---|")
    scores = {}
    if keep:
        os.makedirs(keep, exist_ok=True)
    with (contextlib.nullcontext(os.path.abspath(keep or kept)) if keep or kept
          else tempfile.TemporaryDirectory()) as folder:
        for name in names:
            case, truth = read_json(name, "case.json"), read_json(name, "truth.json")
            report = reanalysed(name, folder) if kept else profile(name, case, folder)
            if "error" in report:
                print(f"| {name} | {case['shape']} | {case['label']} | error: {report['error']} | | | | |")
                continue
            s = scores[name] = score(case, report, truth)
            shown = ", ".join(f"{k} {v:.2f}x" for k, v in sorted(s["measured"].items(), key=lambda kv: -kv[1])) or "none"
            if s["foreign"]:
                shown += f" (not judged: {', '.join(s['foreign'])}, measured on a CPU unlike this one)"
            print(f"| {name} | {case['shape']} | {case['label']} | {s['verdict']} | {', '.join(s['ids'][:3]) or '-'} | "
                  f"{shown} | {_mark(s['top_in_range'])} | {_mark(s['best_first'])} |", flush=True)
    print(f"\n{half} half, {len(scores)} programs:")
    for line in summary(scores):
        print("- " + line)


def _mark(value) -> str:
    return "-" if value is None else ("yes" if value else "no")
