"""The truth for the corpus (bench/corpus/): each program's fixes made by hand and measured.

For every program folder with a case.json, each of its `edits` (the fix made in a copy of train.py,
as a user would) is measured against the unedited program: rounds alternate the two under
`gpuprof run` (the same probes on both sides), and each round's ratio of mean step times is one
measurement (bench/edited_truth.py's way). The result goes to the folder's truth.json with the
machine, its load before and after, and the date, so bench/accuracy.py --corpus can compare any
later gpuprof's estimates with it without measuring again.

    python bench/corpus_truth.py [--rounds R] [--fix ID] [NAME ...]

--fix ID measures that one edit and keeps the program's other truths as they were.

Time nothing else while it runs: on a 2-core machine another process moves every figure."""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, HERE)
import edited_truth  # noqa: E402


def programs() -> list:
    """The corpus's program names: folders holding a case.json, sorted."""
    return sorted(name for name in os.listdir(CORPUS) if os.path.isfile(os.path.join(CORPUS, name, "case.json")))


def case_of(name: str) -> dict:
    with open(os.path.join(CORPUS, name, "case.json")) as handle:
        return json.load(handle)


def edited_source(source: str, replacements: list) -> str:
    """train.py with one fix made: each replacement's `old` must occur exactly once."""
    for item in replacements:
        count = source.count(item["old"])
        if count != 1:
            raise ValueError(f"{item['old']!r} occurs {count} times, not once")
        source = source.replace(item["old"], item["new"])
    return source


def measure(name: str, rounds: int, folder: str, only=None) -> dict:
    """{fix id: {"ratios": [...], "median": x}} for every edit of the program, plus the plain runs'
    verdicts; an edit whose runs failed records its error instead."""
    case = case_of(name)
    program = os.path.join(CORPUS, name, "train.py")
    with open(program) as handle:
        source = handle.read()
    args, torchrun = list(case.get("args") or []), bool(case.get("torchrun"))
    fixes, verdicts = {}, []
    for fix_id, replacements in (case.get("edits") or {}).items():
        if only is not None and fix_id != only:
            continue
        edited_dir = os.path.join(folder, f"{name}-{fix_id}")
        os.makedirs(edited_dir, exist_ok=True)
        edited = os.path.join(edited_dir, "train.py")
        with open(edited, "w") as handle:
            handle.write(edited_source(source, replacements))
        ratios, error = [], None
        for r in range(rounds):
            plain = edited_truth.run(program, args, torchrun, folder, f"{name}-{fix_id}-{r}-plain")
            changed = edited_truth.run(edited, args, torchrun, folder, f"{name}-{fix_id}-{r}-edited")
            if "error" in plain or "error" in changed:
                error = plain.get("error") or "edited: " + changed.get("error")
                break
            verdicts.append(plain["verdict"]["bottleneck"])
            before, after = edited_truth.step_time(plain), edited_truth.step_time(changed)
            if before and after:
                ratios.append(round(before / after, 4))
        fixes[fix_id] = {"error": error} if error else {"ratios": ratios, "median": statistics.median(ratios)}
    return {"fixes": fixes, "verdicts": verdicts}


def cpu_bf16() -> bool:
    """Whether this CPU has bf16 instructions: a mixed-precision truth holds only on CPUs alike."""
    from gpuprof.capture.samplers.system import cpu_flags
    return any(flag in cpu_flags() for flag in ("avx512_bf16", "amx_bf16"))


def load() -> float:
    return os.getloadavg()[0]


def main(argv: list) -> None:
    parser = argparse.ArgumentParser(prog="bench/corpus_truth.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each the plain and the edited program")
    parser.add_argument("--fix", metavar="ID", help="measure that one edit, keeping the program's other truths")
    parser.add_argument("names", nargs="*", metavar="NAME", help="corpus programs (all by default)")
    args = parser.parse_args(argv)
    known = programs()
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"not a corpus program: {', '.join(unknown)} (bench/corpus/ holds {', '.join(known)})")
    rounds, names, only = args.rounds, args.names or known, args.fix
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            before = load()
            got = measure(name, rounds, folder, only)
            path = os.path.join(CORPUS, name, "truth.json")
            sitting = dict(rounds=rounds, measured_at=time.strftime("%Y-%m-%d"), cores=os.cpu_count(),
                           machine=platform.processor() or platform.machine(), load_before=round(before, 2),
                           load_after=round(load(), 2), steps_per_run=edited_truth.STEPS, cpu_bf16=cpu_bf16())
            if only is not None and os.path.exists(path):
                # One fix measured again joins the others: the file's sitting stays theirs, the fix
                # carries its own.
                with open(path) as handle:
                    kept = json.load(handle)
                fresh = {k: dict(v, **sitting) for k, v in got["fixes"].items()}
                truth = dict(kept, fixes=dict(kept.get("fixes") or {}, **fresh))
            else:
                truth = dict(got, **sitting)
            with open(path, "w") as handle:
                json.dump(truth, handle, indent=1, sort_keys=True)
                handle.write("\n")
            shown = ", ".join(f"{k} {v['median']:.2f}x" if "median" in v else f"{k} error" for k, v in got["fixes"].items())
            print(f"{name}: {shown} (load {before:.1f} -> {load():.1f})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
