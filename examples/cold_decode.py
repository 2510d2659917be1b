"""Expected: the same input verdict every run (disk or cpu, whichever part of the producers' time is
larger), cache-preprocessed among the fixes.

Each sample is its own .npy file, read cold from disk (the page cache is told to drop the files after
they are written: posix_fadvise DONTNEED, no root needed) and then decoded on the CPU (a few passes of
per-sample filtering). The producers both read and compute: the verdict must not flip between runs."""
import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

N, SHAPE = 48 * 8, (4, 64, 64)


def make_files(folder):
    rng = np.random.default_rng(0)
    paths = []
    for i in range(N):
        path = os.path.join(folder, f"s{i:05d}.npy")
        np.save(path, rng.standard_normal(SHAPE).astype(np.float32))
        paths.append(path)
    os.sync()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)       # read cold, as from a large data set
        os.close(fd)
    return paths


class NpyFiles(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        x = torch.from_numpy(np.load(self.paths[i]))
        for _ in range(3):
            x = (x + x.roll(1, dims=-1) + x.roll(1, dims=-2)) / 3
        return x, i % 10


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-npy-")
    paths = make_files(folder)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(4 * 64 * 64, 32), nn.ReLU(), nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(NpyFiles(paths), batch_size=8, shuffle=True, num_workers=0)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for path in paths:
        os.unlink(path)
    print(f"cold_decode: final loss {loss.item():.4f}")
