"""Expected: input.cpu. Per-sample CPU augmentation in the training process (num_workers=0) feeds
a small GPU model: the GPU waits for each batch; more DataLoader workers would feed it."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
args = parser.parse_args()
device = "cuda"


class Augmented(torch.utils.data.Dataset):
    def __len__(self):
        return args.steps * 16

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        image = torch.rand(3, 64, 64, generator=g)
        total = 0.0
        for _ in range(20000):          # per-sample work in Python, as slow augmentation is
            total += (i * 7919) % 13
        image = (image * 0.5 + 0.25).clamp(0, 1)
        return image, int(total) % 10


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(32, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(Augmented(), batch_size=16, num_workers=0)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", float(loss.item()))
