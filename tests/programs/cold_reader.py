"""Reads a data file from start to end, a slice of rows per batch, through a DataLoader: what a
first epoch over a data set larger than memory does (argv[1]: the .npy file)."""
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

ROWS = 256


class Slices(Dataset):
    def __init__(self, path):
        self.data = np.load(path, mmap_mode="r")

    def __len__(self):
        return len(self.data) // ROWS

    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.data[i * ROWS:(i + 1) * ROWS])).mean(dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(1024, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x in DataLoader(Slices(sys.argv[1]), batch_size=1):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"cold_reader: {loss.item():.6f}")
