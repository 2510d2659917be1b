"""A ResNet-18 on CIFAR-size images trained as people write one: uint8 images in memory, a random
crop and flip per sample and normalisation to float32 in four DataLoader workers, pin_memory=True,
non-blocking copies, SGD with momentum, float32 (cuDNN's TF32 convolutions, torch's default).

    python conv_workers_pinned.py [--steps 60] [--workers 4]
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN = np.array([0.491, 0.482, 0.447], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.247, 0.243, 0.262], dtype=np.float32).reshape(3, 1, 1)


class Images(torch.utils.data.Dataset):
    def __init__(self, n=20000):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image = np.pad(self.images[i], ((4, 4), (4, 4), (0, 0)), mode="reflect")
        top, left = np.random.randint(0, 9, 2)
        image = image[top:top + 32, left:left + 32]
        if np.random.rand() < 0.5:
            image = image[:, ::-1]
        x = (image.transpose(2, 0, 1).astype(np.float32) / 255 - MEAN) / STD
        return torch.from_numpy(x), int(self.labels[i])


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.short(x))


class ResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def synthetic_step(batch=256, precision="fp32", channels_last=False, device="cuda"):
    """One training step on a random batch already on the device, as a closure (for
    bench/real_gpu/cost_table.py)."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = ResNet18().to(device, memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(batch, 3, 32, 32, device=device).to(memory_format=fmt)
    y = torch.randint(10, (batch,), device=device)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    device = "cuda"
    torch.manual_seed(0)
    loader = torch.utils.data.DataLoader(Images(), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                                         pin_memory=True, persistent_workers=args.workers > 0, drop_last=True)
    model = ResNet18().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    step = 0
    while step < args.steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if step == 5:
                started = time.perf_counter()
            if step % 20 == 0:
                print(f"step {step} loss {loss.item():.3f}")
            if step == args.steps:
                break
    print("done", float(loss.item()), f"{(args.steps - 5) / (time.perf_counter() - started):.2f} steps/s")


if __name__ == "__main__":
    main()
