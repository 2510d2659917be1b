"""A DataLoader starved by per-sample CPU work in the main process (num_workers=0). One intra-op
thread: with one per core, another program holding a core stalls every parallel operator and the
loader's share of the step would depend on the machine's load."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Heavy(Dataset):
    def __len__(self):
        return 48 * 8

    def __getitem__(self, i):
        x = torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(i))
        for _ in range(60):
            x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-2)) / 3
        return x, i % 10


torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 24 * 24, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Heavy(), batch_size=8, shuffle=True, num_workers=0)  # LOADER LINE
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", round(loss.item(), 6))
