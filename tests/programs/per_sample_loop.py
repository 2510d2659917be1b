"""A single-process training loop: each batch built sample by sample in Python, a small MLP, no
DataLoader and no workers. On a machine where other programs hold cores, torch's intra-op threads
(one per core) queue for the cores left.

    python per_sample_loop.py [STEPS]"""
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(steps):
    rows = [[((step * 64 + i) * 7 + j) % 13 / 13.0 for j in range(256)] for i in range(64)]
    x, y = torch.tensor(rows), torch.randint(0, 10, (64,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
