"""Reads single samples from a gzip-chunked HDF5 data set through a chunk cache far smaller than a chunk."""
import os
import sys

import h5py
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

path = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "samples.h5")
with h5py.File(path, "w") as f:
    f.create_dataset("x", data=np.random.default_rng(0).random((512, 64, 64), dtype=np.float32),
                     chunks=(64, 64, 64), compression="gzip")


class H5Samples(Dataset):
    def __init__(self):
        self.file = h5py.File(path, "r", rdcc_nbytes=64 * 1024)
        self.x = self.file["x"]

    def __len__(self):
        return 512

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i])


total = 0.0
for batch in DataLoader(H5Samples(), batch_size=16, num_workers=0):
    total += float(batch.mean())
print("done", round(total, 3))
