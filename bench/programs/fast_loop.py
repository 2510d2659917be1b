"""A fast training loop that stresses the probes: a tiny model fed by a DataLoader with cheap
samples, about 200 steps/s on a 2-core machine (argv[1] steps, default 1500)."""
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Cheap(Dataset):
    def __init__(self, n):
        self.data = torch.randn(n, 64)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i], i % 4


steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Cheap(steps * batch), batch_size=batch, shuffle=True, num_workers=0)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", round(loss.item(), 4))
