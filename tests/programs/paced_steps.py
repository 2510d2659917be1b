"""A DataLoader-fed loop whose step takes about argv[1] milliseconds of compute (default 20)."""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

step_ms = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(8 * 60, 8), torch.zeros(8 * 60, dtype=torch.long)), batch_size=8)
for x, y in loader:
    end = time.perf_counter() + step_ms / 1000
    while time.perf_counter() < end:     # busy "compute" for a steady step time
        pass
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("paced done")
