"""A training loop that ignores SIGTERM, as a job whose handler swallows it: it prints 'ready' after
argv[1] optimizer steps (default 30) and steps on until it is killed (or 300 s pass)."""
import signal
import sys
import time

import torch
from torch import nn

signal.signal(signal.SIGTERM, lambda signum, frame: print("ignoring SIGTERM", flush=True))
ready_after = int(sys.argv[1]) if len(sys.argv) > 1 else 30
torch.manual_seed(0)
model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.zeros(32, dtype=torch.long)
deadline = time.monotonic() + 300
step = 0
while time.monotonic() < deadline:
    end = time.perf_counter() + 0.01
    while time.perf_counter() < end:     # busy "compute" for a steady step
        pass
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    step += 1
    if step == ready_after:
        print("ready", flush=True)
