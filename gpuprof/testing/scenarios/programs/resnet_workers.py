"""A ResNet-18 on CIFAR-size images as people train one: uint8 images in memory (padded once), a
random crop and flip per sample and normalisation to float32 in DataLoader workers, 512 a batch, pin_memory=True, non-blocking
copies, SGD with momentum, float32 (cuDNN's TF32 convolutions by default). `--augment heavy` adds a
per-sample colour jitter and blur in Python/numpy, the work a real GPU outruns.

Expected on an H100: compute (an H200 measured 12.1 ms a step of 256, the GPU busy 70% of it with
four workers on 16 cores: bench/real_gpu/results); with the heavy augmentation, input.cpu."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--batch", type=int, default=512)
parser.add_argument("--augment", choices=("light", "heavy"), default="light")
args = parser.parse_args()
MEAN = np.array([0.491, 0.482, 0.447], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.247, 0.243, 0.262], dtype=np.float32).reshape(3, 1, 1)


class Images(torch.utils.data.Dataset):
    def __init__(self, n=4096):
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        self.padded = np.pad(images, ((0, 0), (4, 4), (4, 4), (0, 0)), mode="reflect")   # once, for the crops
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.padded)

    def __getitem__(self, i):
        top, left = np.random.randint(0, 9, 2)
        image = self.padded[i, top:top + 32, left:left + 32].astype(np.float32)
        if np.random.rand() < 0.5:
            image = image[:, ::-1]
        if args.augment == "heavy":
            for _ in range(6):          # colour jitter and a 3x3 blur, pass after pass
                image = image * np.random.uniform(0.8, 1.2, 3) + np.random.uniform(-10, 10, 3)
                image = sum(np.roll(np.roll(image, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
        x = (np.ascontiguousarray(image.transpose(2, 0, 1)) / 255 - MEAN) / STD
        return torch.from_numpy(x.astype(np.float32)), int(self.labels[i])


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))) + self.short(x))


class ResNet18(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        self.layers, self.fc = nn.Sequential(*layers), nn.Linear(512, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


loader = torch.utils.data.DataLoader(Images(), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                                     pin_memory=True, persistent_workers=args.workers > 0, drop_last=True)
model = ResNet18().to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
step = 0
while step < args.steps:
    for x, y in loader:
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        if step == args.steps:
            break
print("done", float(loss.item()))
