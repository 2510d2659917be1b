"""The simulated GPU's host cost per op: a small MLP trained with AdamW on the simulated device,
against the same loop on plain meta tensors under a dispatch mode that only calls each op (the
least a TorchDispatchMode-based device can cost). Runs alternate between the two (paired), and the
medians of `--repeats` runs are reported: host microseconds per aten op and milliseconds per step.
This cost decides how long CI's GPU scenarios take.

    python bench/simgpu_host_cost.py [--repeats 7] [--steps 150]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROGRAM = textwrap.dedent("""
    import json, sys, time
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    mode, steps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    class Bare(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.ops += 1
            return func(*args, **(kwargs or {}))

    if mode == "bare":
        Bare().__enter__()
        device = "meta"
    else:
        device = "cuda"
    nn = torch.nn
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    x, y = torch.randn(64, 256).to(device), torch.randint(0, 10, (64,)).to(device)

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    with Count():
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = (time.perf_counter() - start) / steps
    print(json.dumps({"step_ms": seconds * 1e3, "ops": Count.ops, "us_per_op": seconds * 1e6 / Count.ops}))
""")


def one_run(mode: str, steps: int, warmup: int, folder: str) -> dict:
    env = dict(os.environ)
    if mode == "face":
        sys.path.insert(0, ROOT)
        from gpuprof.testing.simgpu import Gpu, Machine, environment
        env = environment(Machine(gpus=[Gpu()]).create(folder), env)
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode, str(steps), str(warmup)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    runs = {"face": [], "bare": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            for mode in (("face", "bare") if i % 2 == 0 else ("bare", "face")):
                runs[mode].append(one_run(mode, args.steps, args.warmup, os.path.join(tmp, f"machine{i}")))
    result = {mode: {key: round(statistics.median(r[key] for r in got), 2) for key in ("step_ms", "us_per_op", "ops")}
              for mode, got in runs.items()}
    paired = [f["us_per_op"] - b["us_per_op"] for f, b in zip(runs["face"], runs["bare"])]
    result["face_extra_us_per_op"] = round(statistics.median(paired), 2)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
