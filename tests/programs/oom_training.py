"""Trains a few steps, then limits its own address space and allocates past it: MemoryError, status 1."""
import resource

import torch

model = torch.nn.Linear(256, 256)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    loss = model(torch.randn(32, 256)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with open("/proc/self/statm") as statm:
    size = int(statm.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + (256 << 20), resource.RLIM_INFINITY))
print("limited", flush=True)
cache = [bytearray(64 << 20) for _ in range(16)]          # 1 GiB of "activations"
