"""A per-sample transform that draws random numbers: Gaussian noise and a random flip on top of a
deterministic smoothing, made in the training process (num_workers=0 unless argv[1] says). Caching
the samples would freeze the noise and the flips; only the smoothing may be cached.

    random_augment.py [NUM_WORKERS] [plain|deterministic]

`deterministic` leaves the noise and the flip out (the same smoothing only)."""
import random
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


def smooth(x):
    for _ in range(60):
        x = (x + x.roll(1, dims=-1) + x.roll(1, dims=-2)) / 3
    return x


class Smoothed(Dataset):
    def __init__(self, n=16 * 40):
        self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return smooth(self.images[i].float() / 255), i % 10


class Noisy(Smoothed):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        x = x + 0.05 * torch.randn(x.shape)
        if random.random() < 0.5:
            x = x.flip(-1)
        return x * float(np.random.uniform(0.9, 1.1)), y


if __name__ == "__main__":
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    augment = not (len(sys.argv) > 2 and sys.argv[2] == "deterministic")
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    dataset = Noisy() if augment else Smoothed()
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=workers)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"random_augment: final loss {loss.item():.4f}")
