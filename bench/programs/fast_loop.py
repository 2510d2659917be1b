"""A fast training loop that stresses the probes: a tiny model fed by a DataLoader with cheap
samples (argv[1] steps, default 1500; argv[2] batch size, default 32). On a 2-core machine: about
300 steps/s at batch 256, about 650 steps/s at batch 32."""
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
