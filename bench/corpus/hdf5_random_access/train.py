"""MRI reconstruction from undersampled k-space slices read at random from an HDF5 file.

Adapted from facebookresearch/fastMRI (MIT), fastmri/data/mri_data.py (SliceDataset) and
fastmri/data/transforms.py (UnetDataTransform): each item is one slice of multi-coil k-space and
its root-sum-of-squares target, read from HDF5 by slice index; the transform masks k-space columns,
applies the inverse FFT, combines the coils and normalises; a small U-Net is trained with an L1
loss and RMSprop. Changed: the file is made up at start (smooth phantoms, simple coil maps), one
file holds every slice, it is opened once per process rather than per item, and it is written with
gzip chunks that span 24 slices, so each random read inflates a chunk larger than HDF5's default
1 MiB chunk cache.

    python train.py [--steps N]
"""
import argparse
import os
import tempfile

import h5py
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

CACHE = False  # True: read the whole k-space array into memory once and index it

SLICES = 384
COILS = 2
SIDE = 64
CHUNK_SLICES = 24


def write_volume(path):
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[-1:1:SIDE * 1j, -1:1:SIDE * 1j]
    coil_maps = np.stack([np.exp(-((xx - c) ** 2 + yy ** 2)) for c in (-0.8, 0.8)]).astype(np.complex64)
    kspace = np.empty((SLICES, COILS, SIDE, SIDE), np.complex64)
    target = np.empty((SLICES, SIDE, SIDE), np.float32)
    for s in range(SLICES):
        image = np.zeros((SIDE, SIDE), np.float32)
        for _ in range(6):
            cx, cy, r = rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), rng.uniform(0.1, 0.4)
            image += rng.uniform(0.3, 1.0) * (((xx - cx) ** 2 + (yy - cy) ** 2) < r * r)
        image += rng.normal(0, 0.02, image.shape).astype(np.float32)
        coils = coil_maps * image
        kspace[s] = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(coils, axes=(-2, -1)), norm="ortho"), axes=(-2, -1))
        target[s] = np.sqrt((np.abs(coils) ** 2).sum(0))
    with h5py.File(path, "w") as f:
        f.create_dataset("kspace", data=kspace, chunks=(CHUNK_SLICES, COILS, SIDE, SIDE), compression="gzip", compression_opts=4)
        f.create_dataset("reconstruction_rss", data=target, chunks=(CHUNK_SLICES, SIDE, SIDE))


def ifft2c(x):
    x = torch.fft.ifftshift(x, dim=(-2, -1))
    x = torch.fft.ifft2(x, norm="ortho")
    return torch.fft.fftshift(x, dim=(-2, -1))


def equispaced_mask(index, acceleration=4, center_fraction=0.08):
    """Columns kept: a fully sampled centre and every acceleration-th column from a per-slice offset."""
    rng = np.random.default_rng(index)
    mask = np.zeros(SIDE, np.float32)
    centre = int(round(SIDE * center_fraction))
    start = (SIDE - centre + 1) // 2
    mask[start:start + centre] = 1
    mask[rng.integers(0, acceleration)::acceleration] = 1
    return torch.from_numpy(mask).view(1, 1, SIDE)


class SliceDataset(Dataset):
    def __init__(self, path):
        self.path = path
        self.file = None
        with h5py.File(path, "r") as f:
            self.length = f["kspace"].shape[0]
            self.kspace_in_memory = f["kspace"][:] if CACHE else None

    def __len__(self):
        return self.length

    def open(self):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        return self.file

    def __getitem__(self, index):
        f = self.open()
        kspace = self.kspace_in_memory[index] if self.kspace_in_memory is not None else f["kspace"][index]
        target = torch.from_numpy(f["reconstruction_rss"][index])
        kspace = torch.from_numpy(kspace) * equispaced_mask(index)
        image = ifft2c(kspace).abs()
        image = torch.sqrt((image ** 2).sum(0))
        mean, std = image.mean(), image.std() + 1e-11
        image = ((image - mean) / std).clamp(-6, 6)
        target = ((target - mean) / std).clamp(-6, 6)
        return image.unsqueeze(0), target.unsqueeze(0)


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.InstanceNorm2d(cout), nn.LeakyReLU(0.2),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.InstanceNorm2d(cout), nn.LeakyReLU(0.2))


class Unet(nn.Module):
    def __init__(self, chans=8):
        super().__init__()
        self.down1 = conv_block(1, chans)
        self.down2 = conv_block(chans, 2 * chans)
        self.bottom = conv_block(2 * chans, 2 * chans)
        self.up2 = conv_block(4 * chans, chans)
        self.up1 = conv_block(2 * chans, chans)
        self.out = nn.Conv2d(chans, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.avg_pool2d(d1, 2))
        b = self.bottom(F.avg_pool2d(d2, 2))
        u2 = self.up2(torch.cat([F.interpolate(b, scale_factor=2), d2], 1))
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2), d1], 1))
        return x + self.out(u1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "slices.h5")
        write_volume(path)
        dataset = SliceDataset(path)
        loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=0, drop_last=True)

        model = Unet()
        optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
        step = 0
        while step < args.steps:
            for image, target in loader:
                loss = F.l1_loss(model(image), target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step += 1
                if step % 50 == 0:
                    print(f"step {step} loss {loss.item():.4f}", flush=True)
                if step >= args.steps:
                    break
        if dataset.file is not None:
            dataset.file.close()
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
