"""Image classification streamed from tar shards, WebDataset style, by an IterableDataset.

Adapted from webdataset/webdataset (BSD-3-Clause), webdataset/tariterators.py and the shard
splitting of its pipeline: each loader worker takes its share of the shard list, streams each tar
file member by member (tarfile in "r|" mode, no seeking), groups members into samples by their key
(the name before the first dot: key.jpg, key.cls), keeps a small shuffle buffer, decodes the JPEG
and builds the tensor. Two workers, as is common. The shards are written at start with tarfile.

    python train.py [--steps N]
"""
import argparse
import io
import os
import random
import tarfile
import tempfile

import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

SHARDS = 8
PER_SHARD = 96
PHOTO = (512, 384)
SIDE = 64
CLASSES = 10


def write_shards(folder):
    rng = np.random.default_rng(0)
    paths = []
    for s in range(SHARDS):
        path = os.path.join(folder, f"train-{s:06d}.tar")
        with tarfile.open(path, "w") as tar:
            for i in range(PER_SHARD):
                key = f"{s:03d}{i:05d}"
                label = int(rng.integers(0, CLASSES))
                coarse = rng.integers(0, 200, (12, 16, 3), dtype=np.int16)
                coarse[..., label % 3] += 40 + 5 * label
                picture = Image.fromarray(np.clip(coarse, 0, 255).astype(np.uint8)).resize(PHOTO, Image.BICUBIC)
                buffer = io.BytesIO()
                picture.save(buffer, format="JPEG", quality=90)
                for suffix, payload in (("jpg", buffer.getvalue()), ("cls", str(label).encode())):
                    info = tarfile.TarInfo(f"{key}.{suffix}")
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        paths.append(path)
    return paths


def tar_members(path):
    """(name, bytes) for each regular file in a tar stream, read front to back."""
    with open(path, "rb") as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            if member.isreg():
                yield member.name, tar.extractfile(member).read()


def group_by_keys(members):
    """Consecutive members with the same key (name up to the first dot) make one sample dict."""
    current = None
    for name, data in members:
        key, suffix = name.split(".", 1)
        if current is not None and current["__key__"] != key:
            yield current
            current = None
        if current is None:
            current = {"__key__": key}
        current[suffix] = data
    if current is not None:
        yield current


class TarShards(IterableDataset):
    def __init__(self, shards, buffer=64, seed=0):
        self.shards, self.buffer, self.seed = shards, buffer, seed
        self.epoch = 0

    def decode(self, sample):
        image = Image.open(io.BytesIO(sample["jpg"]))
        image = image.convert("RGB")
        image = image.resize((SIDE, SIDE), Image.BILINEAR)
        x = torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1).float().div_(255)
        return (x - 0.5) / 0.25, int(sample["cls"])

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        rng = random.Random(self.seed * 1000 + self.epoch * 10 + worker)
        shards = self.shards[:]
        rng.shuffle(shards)
        pool = []
        for path in shards[worker::workers]:
            for sample in group_by_keys(tar_members(path)):
                pool.append(sample)
                if len(pool) >= self.buffer:
                    yield self.decode(pool.pop(rng.randrange(len(pool))))
        rng.shuffle(pool)
        for sample in pool:
            yield self.decode(sample)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, 2, 1)
        self.c2 = nn.Conv2d(16, 64, 3, 2, 1)
        self.c3 = nn.Conv2d(64, 64, 3, 2, 1)
        self.fc = nn.Linear(64, CLASSES)

    def forward(self, x):
        x = F.relu(self.c1(x))
        x = F.relu(self.c2(x))
        x = F.relu(self.c3(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=250)
    args = parser.parse_args()
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as folder:
        shards = write_shards(folder)
        dataset = TarShards(shards)
        loader = DataLoader(dataset, batch_size=32, num_workers=2)

        model = Net()
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
        step = 0
        while step < args.steps:
            dataset.epoch += 1  # the workers get a fresh copy of the dataset, and so a new shard order, each pass
            for images, labels in loader:
                loss = F.cross_entropy(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step += 1
                if step % 50 == 0:
                    print(f"step {step} loss {loss.item():.4f}", flush=True)
                if step >= args.steps:
                    break
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
