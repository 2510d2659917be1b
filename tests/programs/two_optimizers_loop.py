"""No DataLoader, two optimizers: `pair` steps one per parameter group back to back after one
forward and backward (one training step each iteration); `alternate` runs a forward, backward and
step for each of two models in turn, as a GAN does (two steps each iteration). argv[2]: iterations."""
import sys

import torch
from torch import nn

mode, iterations = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
first, second = nn.Linear(8, 8), nn.Linear(8, 1)
opt_first = torch.optim.SGD(first.parameters(), lr=0.01)
opt_second = torch.optim.SGD(second.parameters(), lr=0.01)
for step in range(iterations):
    x = torch.randn(4, 8)
    if mode == "pair":
        loss = second(first(x)).pow(2).mean()
        opt_first.zero_grad()
        opt_second.zero_grad()
        loss.backward()
        opt_first.step()
        opt_second.step()
    else:
        loss = first(x).pow(2).mean()
        opt_first.zero_grad()
        loss.backward()
        opt_first.step()
        loss = second(x).pow(2).mean()
        opt_second.zero_grad()
        loss.backward()
        opt_second.step()
print("done", mode)
