"""Seeded training with shuffling, dropout and forked workers: prints loss, a weight checksum and the
next random numbers, which must be bit-identical with and without gpuprof."""
import random
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __len__(self):
        return 128

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(12, generator=g) * 255, i % 3


if __name__ == "__main__":
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(Noisy(), batch_size=16, shuffle=True, num_workers=workers,
                        multiprocessing_context="fork" if workers else None)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x / 255), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    checksum = sum(float(p.double().sum()) for p in model.parameters())
    print(f"loss {loss.item()!r} weights {checksum!r} next {torch.rand(1).item()!r} "
          f"{random.random()!r} {np.random.rand()!r}")
