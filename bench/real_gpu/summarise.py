"""One line per gpuprof report: verdict and share, the top fixes with their ranges, the job's GPU
utilisation over the steps, the copies' share, MFU and its peak. For the real-GPU runs of
bench/real_gpu/run.sh (and the same programs on the simulated GPU).

    python bench/real_gpu/summarise.py REPORT.json [REPORT.json ...]
"""
import json
import os
import sys


def line(path: str) -> str:
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as exc:
        return f"{name:26} no report ({type(exc).__name__})"
    verdict = report.get("verdict") or {}
    fixes = []
    for advice in (report.get("advice") or [])[:3]:
        est = advice.get("estimate") or {}
        span = f"{est['low']:.2f}-{est['high']:.2f}x" if est.get("low") else "not estimated"
        fixes.append(f"{advice['id']} {span}")
    steps = report.get("steps") or {}
    gpus = [g for g in ((report.get("system") or {}).get("gpus") or []) if g.get("job")]
    util = gpus[0].get("util_gpu") if gpus else None
    eff = report.get("efficiency") or {}
    copies = report.get("copies") or {}
    share = verdict.get("share")
    parts = [f"{name:26} exit {report.get('exit_code')}",
             f"{verdict.get('bottleneck')} {share:.0%}" if share is not None else str(verdict.get("bottleneck")),
             f"step {steps.get('median_step_s', 0) * 1e3:.1f} ms" if steps.get("median_step_s") else "no steps",
             f"util {util:.0%}" if util is not None else "util -",
             f"copies {copies.get('share', 0):.0%}" if copies.get("share") is not None else "",
             f"MFU {eff['mfu']:.1%} of {eff['peak']['tflops']:g} {eff['peak'].get('dtype')}" if eff.get("mfu") else "",
             "; ".join(fixes) or "no fixes"]
    return " | ".join(p for p in parts if p)


def main(paths) -> int:
    for path in paths:
        print(line(path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
