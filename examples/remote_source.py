"""Expected: input.latency, fix num-workers first.

Each sample comes from a slow remote store (simulated: 4 ms of waiting per request, no CPU, no
disk); one process fetches them one after another."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RemoteStore(Dataset):
    def __len__(self):
        return 16 * 40

    def __getitem__(self, i):
        time.sleep(0.004)                       # network round trip to the object store
        g = torch.Generator().manual_seed(i)
        return torch.rand(256, generator=g), i % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = DataLoader(RemoteStore(), batch_size=16, shuffle=True, num_workers=0)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"remote_source: final loss {loss.item():.4f}")
