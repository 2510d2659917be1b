"""Two spawned DataLoader workers feeding a small model."""
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        return torch.full((16,), float(i)) ** 0.5, i % 4


if __name__ == "__main__":
    context = sys.argv[1] if len(sys.argv) > 1 else "spawn"
    persistent = len(sys.argv) > 2 and sys.argv[2] == "persistent"
    torch.manual_seed(0)
    model = nn.Linear(16, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Squares(), batch_size=8, num_workers=2, multiprocessing_context=context,
                        persistent_workers=persistent)
    for epoch in range(2 if persistent else 1):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(context, "done", round(loss.item(), 6))
