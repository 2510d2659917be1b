"""A DataLoader-fed loop whose step takes about argv[1] milliseconds of compute (default 20), for
argv[2] steps (default 60)."""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

step_ms = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(8 * steps, 8), torch.zeros(8 * steps, dtype=torch.long)), batch_size=8)
for x, y in loader:
    end = time.perf_counter() + step_ms / 1000
    while time.perf_counter() < end:     # busy "compute" for a steady step time
        pass
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("paced done")
