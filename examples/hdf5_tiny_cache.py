"""Expected: input.cpu, fix hdf5-chunk-cache in the top three.

Samples are read one by one from a gzip-compressed HDF5 data set whose chunks hold 32 samples
(1 MiB), through a chunk cache of 256 KiB: every sample read decompresses a whole chunk again."""
import os
import sys
import tempfile

import h5py
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

N, SHAPE = 512, (1, 64, 128)


def make_file(folder):
    path = os.path.join(folder, "images.h5")
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=rng.integers(0, 256, (N,) + SHAPE, dtype=np.uint8).astype(np.float32),
                         chunks=(32,) + SHAPE, compression="gzip", compression_opts=4)
        f.create_dataset("labels", data=rng.integers(0, 10, N))
    return path


class H5Images(Dataset):
    def __init__(self, path):
        self.path = path
        self.file = None

    def __len__(self):
        return N

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r", rdcc_nbytes=256 * 1024)
        return torch.from_numpy(self.file["images"][i]) / 255, int(self.file["labels"][i])


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-h5-")
    path = make_file(folder)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64 * 128, 32), nn.ReLU(), nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(H5Images(path), batch_size=16, shuffle=False, num_workers=0)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    os.unlink(path)
    print(f"hdf5_tiny_cache: final loss {loss.item():.4f}")
