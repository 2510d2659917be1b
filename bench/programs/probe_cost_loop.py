"""A loop whose per-step work is as small as torch allows, so that what the probes add per
optimizer step and per DataLoader batch stands out. argv[1] names the modes, comma-separated, run
one after the other (`step`: optimizer steps on a tiny model, no DataLoader; `batch`: batches taken
from a DataLoader, no training; `both`: a DataLoader feeding the optimizer steps); argv[2] the
iterations of each (default 3000). Prints one JSON line per mode: microseconds per iteration over
the iterations after the first fifth (warm-up), by the wall clock and by the process's CPU time
(all its threads: gpuprof's own included), each the median over ten blocks of those iterations: a
burst of other work on the machine moves a block or two, not the figure."""
import json
import statistics
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


BLOCKS = 10
block = max(1, (steps - warmup) // BLOCKS)


def per_iteration_us(marks: list, which: int) -> float:
    """The median block's microseconds per iteration, by clock `which` of the marks."""
    return statistics.median(b[which] - a[which] for a, b in zip(marks, marks[1:])) / block * 1e6


for mode in modes:
    marks = []                  # (wall, cpu) at the start of each block and the end of the last
    for i, (xb, yb) in enumerate(iterations(mode)):
        if i >= warmup and (i - warmup) % block == 0 and len(marks) <= BLOCKS:
            marks.append((time.perf_counter(), time.process_time()))
        if mode != "batch":
            train(xb, yb)
    if len(marks) <= BLOCKS:
        marks.append((time.perf_counter(), time.process_time()))
    print(json.dumps({"mode": mode, "wall_us": per_iteration_us(marks, 0), "cpu_us": per_iteration_us(marks, 1)}))
