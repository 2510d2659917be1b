"""An HDF5 trainer as its README runs it, with 8 DataLoader workers on a small machine: each sample
is read from a gzip-chunked data set and scaled (light CPU per sample, but 8 processes of it), while
a small convolutional model's intra-op threads want every core. The loop hardly waits for a batch,
yet workers and training fight for the cores: free input makes the steps faster."""
import os
import sys
import tempfile

import h5py
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

N, SHAPE = 16 * 40, (3, 64, 64)


def make_file(folder):
    path = os.path.join(folder, "images.h5")
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=rng.integers(0, 256, (N,) + SHAPE, dtype=np.uint8),
                         chunks=(1,) + SHAPE, compression="gzip", compression_opts=6)
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
            self.file = h5py.File(self.path, "r")
        x = torch.from_numpy(self.file["images"][i]).float() / 255
        x = nn.functional.avg_pool2d(x[None], 3, stride=1, padding=1)[0]      # a light blur, as a README's transform
        return (x - 0.5) / 0.25, int(self.file["labels"][i])


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-h5-")
    path = make_file(folder)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(8), nn.Flatten(), nn.Linear(16 * 64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(H5Images(path), batch_size=16, shuffle=True, num_workers=8, persistent_workers=True)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    os.unlink(path)
    print(f"hdf5_eight_workers: final loss {loss.item():.4f}")
