"""The simulated GPU against a real one, program by program: each program of bench/real_gpu/programs
that `gpuprof run` measured on an NVIDIA H200 (bench/real_gpu/results, 2026-11-27) runs here on the
simulated H200 under `gpuprof run`, and its verdict, step time and GPU utilisation are printed beside
the real GPU's. The verdicts must agree; step times differ by the simulated host's cost per op
(bench/simgpu_host_cost.py) where the host sets the pace.

    python bench/simgpu_agreement.py [--only NAME] [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(HERE, "real_gpu", "programs")

#: What the H200 showed (bench/real_gpu/results/h200-2026-11-27-call1.txt and call3.txt): verdict,
#: median step in ms, NVML utilisation over the steps.
REAL = {
    "lm_fp32": (("transformer_lm.py", "--precision", "fp32", "--steps", "25"), "compute", 136.2, 0.99),
    "lm_bf16": (("transformer_lm.py", "--precision", "bf16", "--steps", "40"), "compute", 27.6, 0.72),
    "conv_workers_pinned": (("conv_workers_pinned.py", "--steps", "60", "--workers", "2"), "compute", 12.1, 0.70),
    "tiny_mlp": (("tiny_mlp.py", "--steps", "1500"), "host.overhead", 1.4, 0.08),
}


def run_one(name: str, folder: str, keep: str) -> dict:
    sys.path.insert(0, ROOT)
    from gpuprof.testing.simgpu import Machine, environment, h200

    argv, verdict, step_ms, util = REAL[name]
    machine = Machine(gpus=[h200()]).create(os.path.join(folder, name + "-machine"))
    out = os.path.join(keep or folder, name)
    subprocess.run([sys.executable, "-m", "gpuprof", "run", "--out", out, os.path.join(PROGRAMS, argv[0]), *argv[1:]],
                   env=environment(machine), cwd=ROOT, capture_output=True, text=True)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    gpus = [g for g in ((report.get("system") or {}).get("gpus") or []) if g.get("job")]
    return {"name": name, "real": {"verdict": verdict, "step_ms": step_ms, "util": util},
            "simulated": {"verdict": (report.get("verdict") or {}).get("bottleneck"),
                          "step_ms": round(((report.get("steps") or {}).get("median_step_s") or 0) * 1e3, 1),
                          "util": gpus[0].get("util_gpu") if gpus else None}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", choices=sorted(REAL))
    parser.add_argument("--keep", help="keep each run's folder here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.only or REAL:
            row = run_one(name, folder, args.keep)
            rows.append(row)
            real, sim = row["real"], row["simulated"]
            agree = "agree" if real["verdict"] == sim["verdict"] else "DIFFER"
            print(f"{name:22} real {real['verdict']:14} {real['step_ms']:7.1f} ms util {real['util']:.0%} | "
                  f"simulated {sim['verdict'] or '-':14} {sim['step_ms']:7.1f} ms util "
                  f"{'-' if sim['util'] is None else format(sim['util'], '.0%')} | {agree}", flush=True)
    print(f"{sum(r['real']['verdict'] == r['simulated']['verdict'] for r in rows)} of {len(rows)} agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
