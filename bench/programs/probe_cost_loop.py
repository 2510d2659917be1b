"""A loop whose per-step work is as small as torch allows, so that what the probes add per
optimizer step and per DataLoader batch stands out. argv[1] names the modes, comma-separated, run
one after the other (`step`: optimizer steps on a tiny model, no DataLoader; `batch`: batches taken
from a DataLoader, no training; `both`: a DataLoader feeding the optimizer steps); argv[2] the
iterations of each (default 3000). Prints one JSON line per mode: microseconds per iteration over
the iterations after the first fifth (warm-up), by the wall clock and by the process's CPU time
(all its threads: gpuprof's own included)."""
import json
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

modes = (sys.argv[1] if len(sys.argv) > 1 else "step").split(",")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
warmup = steps // 5
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 2)


def train(xb, yb):
    loss = ((model(xb) - yb) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def iterations(mode):
    """One item per iteration, for as many iterations as asked."""
    if mode == "step":
        for _ in range(steps):
            yield x, y
        return
    yield from DataLoader(TensorDataset(torch.randn(steps * 2, 4), torch.randn(steps * 2, 2)), batch_size=2)


for mode in modes:
    started = cpu_started = None
    for i, (xb, yb) in enumerate(iterations(mode)):
        if i == warmup:
            started, cpu_started = time.perf_counter(), time.process_time()
        if mode != "batch":
            train(xb, yb)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    measured = steps - warmup
    print(json.dumps({"mode": mode, "wall_us": elapsed / measured * 1e6, "cpu_us": cpu / measured * 1e6}))
