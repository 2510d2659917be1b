"""Spawned DataLoader workers started again every epoch, in a script whose top level does slow
work outside the `__main__` guard (argv[1] seconds, default 0.5): every worker runs it again.
argv[2]: the epochs (default 4)."""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

TOP_LEVEL_S = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
time.sleep(TOP_LEVEL_S)             # stands for heavy imports or set-up at the script's top level


class Squares(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((16,), float(i)) ** 0.5, i % 4


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(16, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Squares(), batch_size=8, num_workers=2, multiprocessing_context="spawn")
    for epoch in range(int(sys.argv[2]) if len(sys.argv) > 2 else 4):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print("spawn epochs done", round(loss.item(), 6))
