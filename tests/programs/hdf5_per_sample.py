"""An HDF5 data set opened again for every sample (`h5py.File(path)` in __getitem__), gzip-chunked
16 samples a chunk and read in random order: each read decompresses a whole chunk, and each new
handle starts with an empty chunk cache. `keep` as argv[2] keeps one handle per process instead
(the hand-made change the HDF5 fix describes). Usage: hdf5_per_sample.py FOLDER [keep]"""
import os
import sys

import h5py
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

SAMPLES, SHAPE, CHUNK = 4096, (1, 32, 32), 16


def make_file(folder):
    path = os.path.join(folder, "images.h5")
    if not os.path.exists(path):
        data = np.random.default_rng(0).random((SAMPLES,) + SHAPE, dtype=np.float32)
        with h5py.File(path, "w") as f:
            f.create_dataset("images", data=data, chunks=(CHUNK,) + SHAPE, compression="gzip")
    return path


class PerSample(Dataset):
    def __init__(self, path, keep):
        self.path, self.keep, self.data = path, keep, None

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        if self.keep:
            if self.data is None:
                self.data = h5py.File(self.path, "r")["images"]
            return torch.from_numpy(self.data[i])
        with h5py.File(self.path, "r") as f:
            return torch.from_numpy(f["images"][i])


if __name__ == "__main__":
    path = make_file(sys.argv[1])
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(PerSample(path, len(sys.argv) > 2 and sys.argv[2] == "keep"), batch_size=32, shuffle=True)
    for step, x in enumerate(loader):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 60:
            break
    print(f"hdf5_per_sample: {loss.item():.6f}")
