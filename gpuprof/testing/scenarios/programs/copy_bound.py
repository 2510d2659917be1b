"""Expected: transfer.h2d. Each step copies a 48 MiB float32 batch of uint8-able values from
pageable memory with a blocking copy into a tiny model: the copies are the step."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=150)
args = parser.parse_args()
device = "cuda"


class Batches(torch.utils.data.Dataset):
    def __init__(self):
        self.batches = [torch.randint(0, 256, (256, 3, 128, 128)).float() for _ in range(4)]

    def __len__(self):
        return args.steps

    def __getitem__(self, i):
        return self.batches[i % len(self.batches)]


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 128 * 128, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
target = torch.zeros(256, dtype=torch.long, device=device)
for x in torch.utils.data.DataLoader(Batches(), batch_size=None):
    x = x.to(device)
    loss = nn.functional.cross_entropy(model(x / 255), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", float(loss.item()))
