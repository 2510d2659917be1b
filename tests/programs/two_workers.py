"""A DataLoader with two worker processes making CPU-heavy batches for a small model: input-bound."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Heavy(Dataset):
    def __len__(self):
        return 8 * 24

    def __getitem__(self, i):
        x = torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(i))
        for _ in range(40):
            x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-2)) / 3
        return x, i % 10


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 24 * 24, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Heavy(), batch_size=8, shuffle=True, num_workers=2)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print("done", round(loss.item(), 6))
