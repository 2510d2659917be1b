"""Decoded 8-bit images held in host memory as float32 (0..255), sliced into batches and copied to
the GPU from pageable memory, into a small convolutional model: no DataLoader.

Expected on an H100: transfer.h2d (a 512 x 3 x 128 x 128 float32 batch is 100 MB: about 10 ms at a
pageable copy's 10 GB/s, an H200 measured, against about 1 ms of compute), answered by keeping the
pixels as uint8 (4x fewer bytes) and by pinned memory."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--batch", type=int, default=512)
args = parser.parse_args()
pixels = torch.randint(0, 256, (args.batch * 2, 3, 128, 128), dtype=torch.uint8).float()   # decoded, kept as float
labels = torch.randint(0, 10, (args.batch * 2,))
model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 10)).to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(args.steps):
    start = (step % 2) * args.batch
    x = pixels[start:start + args.batch].to("cuda") / 255
    y = labels[start:start + args.batch].to("cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", float(loss.item()))
