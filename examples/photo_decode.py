"""Expected: compute, with the input's CPU cost stated and fixes that shrink it (decode-reduced-size).

An image pipeline on a small machine: two workers open photo-sized JPEGs (500x375, written to a
temporary folder at start), decode them in full, shrink them to the model's 64x64 and mirror every
other one, while the model's convolutions keep the cores busy with the training's own
threads. The workers keep up, so steps hardly wait for data, yet decoding takes cores the training
needs, and most of the decoded pixels are thrown away by the resize.

    python examples/photo_decode.py [--replay N] [--draft] [--steps S]

--replay N: the input made free: the first N batches are kept in memory and replayed (the truth
the input's cost is measured against). --draft: JPEG draft mode, the decoder reducing the image
(by 1/2, 1/4 or 1/8) to no less than the model's input before the resize."""
import argparse
import os
import tempfile

import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset

SOURCE = (500, 375)
SIDE = 64


def write_photos(folder: str, count: int) -> list:
    """Smooth random pictures with a little grain, saved as JPEGs of a photo's size."""
    rng = np.random.default_rng(0)
    paths = []
    for i in range(count):
        coarse = rng.integers(0, 256, (SOURCE[1] // 16, SOURCE[0] // 16, 3), dtype=np.uint8)
        picture = np.asarray(Image.fromarray(coarse).resize(SOURCE, Image.BICUBIC), dtype=np.int16)
        grain = rng.integers(-12, 13, picture.shape, dtype=np.int16)
        path = os.path.join(folder, f"{i:04d}.jpg")
        Image.fromarray(np.clip(picture + grain, 0, 255).astype(np.uint8)).save(path, quality=90)
        paths.append(path)
    return paths


class Photos(Dataset):
    def __init__(self, paths, draft=False):
        self.paths, self.draft = paths, draft

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = Image.open(self.paths[i])
        if self.draft:
            image.draft("RGB", (SIDE, SIDE))
        image = image.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR)
        if i % 2:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        x = torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1).float().div_(255)
        return x, i % 10


def model_for_photos():
    return nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(), nn.Conv2d(48, 64, 3, stride=2, padding=1),
                         nn.ReLU(), nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def batches(loader, steps, replay):
    """`steps` batches from the loader; with `replay`, its first batches kept and served again."""
    kept, served = [], 0
    while served < steps:
        for batch in (kept if replay and len(kept) >= replay else loader):
            yield batch
            served += 1
            if served >= steps:
                return
            if replay and len(kept) < replay:
                kept.append(batch)
                if len(kept) == replay:
                    break


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--replay", type=int, default=0)
    parser.add_argument("--draft", action="store_true")
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as folder:
        paths = write_photos(folder, 256)
        model = model_for_photos()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(Photos(paths, args.draft), batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)
        for x, y in batches(loader, args.steps, args.replay):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(f"photo_decode: final loss {loss.item():.4f}")
