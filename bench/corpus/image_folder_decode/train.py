"""Image classification from a folder of JPEGs, one folder per class (the ImageFolder layout).

Adapted from pytorch/examples imagenet/main.py (BSD-3-Clause): two loader workers open, decode and
augment each JPEG (random resized crop, horizontal flip, normalise) for a small residual network
trained with SGD and momentum. The photos are made up at start in a temporary folder.

    python train.py [--steps N]
"""
import argparse
import os
import random
import tempfile

import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset

CLASSES = ["cat", "dog", "fox", "owl"]
PER_CLASS = 48
PHOTO = (500, 375)
SIDE = 64
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def make_photo_folder(root):
    """Smooth coloured pictures, each class with its own tint, saved as photo-sized JPEGs."""
    rng = np.random.default_rng(0)
    for c, name in enumerate(CLASSES):
        os.makedirs(os.path.join(root, name))
        tint = np.array([40 * c, 200 - 40 * c, 120], dtype=np.int16)
        for i in range(PER_CLASS):
            coarse = rng.integers(0, 160, (PHOTO[1] // 25, PHOTO[0] // 25, 3), dtype=np.int16) + tint // 2
            picture = Image.fromarray(np.clip(coarse, 0, 255).astype(np.uint8)).resize(PHOTO, Image.BICUBIC)
            grain = rng.integers(-10, 11, (PHOTO[1], PHOTO[0], 3), dtype=np.int16)
            pixels = np.clip(np.asarray(picture, dtype=np.int16) + grain, 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, name, f"{i:04d}.jpg"), quality=90)


class PhotoFolder(Dataset):
    """Walks root/<class>/<file>.jpg like torchvision's ImageFolder and augments like the ImageNet recipe."""

    def __init__(self, root):
        self.samples = []
        for label, name in enumerate(sorted(os.listdir(root))):
            for file in sorted(os.listdir(os.path.join(root, name))):
                self.samples.append((os.path.join(root, name, file), label))

    def __len__(self):
        return len(self.samples)

    def random_resized_crop(self, image):
        width, height = image.size
        area = width * height * random.uniform(0.25, 1.0)
        ratio = random.uniform(3 / 4, 4 / 3)
        w = min(width, int(round((area * ratio) ** 0.5)))
        h = min(height, int(round((area / ratio) ** 0.5)))
        left, top = random.randint(0, width - w), random.randint(0, height - h)
        return image.resize((SIDE, SIDE), Image.BILINEAR, box=(left, top, left + w, top + h))

    def __getitem__(self, index):
        path, label = self.samples[index]
        with open(path, "rb") as f:
            image = Image.open(f)
            image = image.convert("RGB")
        image = self.random_resized_crop(image)
        if random.random() < 0.5:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        x = torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1).float().div_(255)
        x = (x - MEAN) / STD
        return x, label


def block(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SmallResNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem = block(3, 32, 2)
        self.layer1 = block(32, 64, 2)
        self.layer2 = block(64, 64, 2)
        self.layer3 = block(64, 64, 1)
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        x = x + self.layer3(x)
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def seed_worker(worker_id):
    random.seed(torch.initial_seed() % 2**32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=160)
    args = parser.parse_args()
    torch.manual_seed(0)
    random.seed(0)

    with tempfile.TemporaryDirectory() as root:
        make_photo_folder(root)
        dataset = PhotoFolder(root)
        loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2, worker_init_fn=seed_worker, drop_last=True)

        model = SmallResNet(len(CLASSES))
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)

        model.train()
        step, running = 0, 0.0
        while step < args.steps:
            for images, target in loader:
                output = model(images)
                loss = criterion(output, target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running = 0.9 * running + 0.1 * loss.item() if step else loss.item()
                step += 1
                if step % 40 == 0:
                    print(f"step {step} loss {running:.4f}", flush=True)
                if step >= args.steps:
                    break
    print(f"final loss {running:.4f}")


if __name__ == "__main__":
    main()
